import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../sim/input/scenario';
import { READY_MADE } from './scenarios';

describe('the scenario picker', () => {
  it('lists every ready-made scenario file, with its title', () => {
    const files = readdirSync('static/scenarios')
      .filter((f) => f.endsWith('.json'))
      .map((f) => f.replace(/\.json$/, ''))
      .sort();
    expect(READY_MADE.map((s) => s.name).sort()).toEqual(files);
    for (const s of READY_MADE) {
      const r = parseScenario(readFileSync(`static/scenarios/${s.name}.json`, 'utf8'));
      expect(r.ok && r.scenario.data.title).toBe(s.title);
    }
  });
});
