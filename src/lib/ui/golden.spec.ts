import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { digestRun } from '$lib/sim/report/report';
import { parseScenario } from '$lib/sim/input/scenario';
import { GOLDEN_SCENARIOS } from './golden';
import { GOLDEN_DIGESTS } from './golden-digests';

describe('the self-test page compares with what Node gives', () => {
  it('golden-digests.ts equals a run in Node (else: npm run gen:golden)', () => {
    expect(Object.keys(GOLDEN_DIGESTS).sort()).toEqual([...GOLDEN_SCENARIOS].sort());
    for (const name of GOLDEN_SCENARIOS) {
      const parsed = parseScenario(readFileSync(`static/scenarios/${name}.json`, 'utf8'));
      if (!parsed.ok) throw new Error(`${name}: ${parsed.errors[0]?.message}`);
      const d = digestRun(parsed.scenario);
      expect(GOLDEN_DIGESTS[name], name).toEqual({ frames: d.frames, audit: d.audit });
    }
  });
});
