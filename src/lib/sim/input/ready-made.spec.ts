/**
 * The precompiled ready-made scenarios (ready-made.ts) are what the parser gives: for every file
 * in static/scenarios/, the worker's zod-free load yields exactly `parseScenario`'s result —
 * every value, every object's prototype (the name records'), nothing more — and any other input
 * (an edited copy) is not taken for it. A failure here after a change to a scenario file or the
 * parser means: run `npm run gen:ready-made`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseScenario } from './scenario';
import { prepareReadyMade, readyMadeHash, readyMadeParse } from './ready-made';
import { READY_MADE_BY_HASH } from './ready-made/index';

const files = readdirSync('static/scenarios').filter((f) => f.endsWith('.json'));
const read = (f: string): unknown =>
  JSON.parse(readFileSync(`static/scenarios/${f}`, 'utf8')) as unknown;

/** Every object in `v` with its path and prototype, to compare shapes exactly. */
function protos(v: unknown, path = '$', out: string[] = []): string[] {
  if (typeof v !== 'object' || v === null) return out;
  const p = Object.getPrototypeOf(v) as unknown;
  out.push(`${path}: ${p === null ? 'null' : p === Object.prototype ? 'Object' : 'Array'}`);
  for (const [k, x] of Object.entries(v)) protos(x, `${path}.${k}`, out);
  return out;
}

describe('the ready-made scenarios, precompiled', () => {
  it('has one for every scenario file, and none other', () => {
    expect(Object.keys(READY_MADE_BY_HASH)).toHaveLength(files.length);
    for (const f of files)
      expect(
        READY_MADE_BY_HASH[readyMadeHash(read(f))!],
        `${f} is not precompiled: run npm run gen:ready-made`
      ).toBeDefined();
  });

  it.each(files)("%s: equals the parser's output, prototypes included", async (f) => {
    const raw = read(f);
    expect(await prepareReadyMade(raw)).toBe(true);
    const made = readyMadeParse(raw);
    const parsed = parseScenario(raw);
    expect(made).toStrictEqual(parsed);
    expect(protos(made)).toEqual(protos(parsed));
    // A fresh copy each time: no run shares its objects with another.
    const again = readyMadeParse(raw);
    expect(again).toStrictEqual(made);
    expect(again).not.toBe(made);
    if (again?.ok && made?.ok) expect(again.scenario.data).not.toBe(made.scenario.data);
  });

  it('takes nothing else for a ready-made scenario: an edited copy goes to the parser', async () => {
    const raw = read(files[0]!) as Record<string, unknown>;
    for (const edited of [
      { ...raw, seed: (raw.seed as number) + 1 },
      { ...raw, durationMs: 1 },
      Object.fromEntries(Object.entries(raw).reverse()),
      JSON.stringify(raw)
    ]) {
      expect(await prepareReadyMade(edited)).toBe(false);
      expect(readyMadeParse(edited)).toBeNull();
    }
    // Not prepared: not taken, even when it is one.
    expect(readyMadeParse(read(files[0]!))).toBeNull();
  });
});
