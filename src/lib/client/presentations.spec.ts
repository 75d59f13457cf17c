import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { CloneMap } from '../machine/clone';
import { PresentationHistory, saneAlert } from './presentations';

const SPEC = { threshold: 40, windowMs: 600_000 };

describe('PresentationHistory (the retry-loop alert)', () => {
  // The seed: "an identity re-presented forty times in ten minutes is a retry loop" — the first
  // presentation and 40 re-presentations, 41 in all; the 40th presentation is 39 re-presentations.
  it('fires on the 41st presentation within 10 minutes (40 re-presentations), not on the 40th', () => {
    const h = new PresentationHistory();
    const fired = Array.from({ length: 41 }, (_, i) => h.record('k', i * 14_000, SPEC).alert);
    expect(fired.slice(0, 40).every((f) => !f)).toBe(true);
    expect(fired[40]).toBe(true);
  });

  it('does not fire when the same 41 are spread over 11 minutes', () => {
    const h = new PresentationHistory();
    const step = 660_000 / 40;
    let any = false;
    for (let i = 0; i < 41; i++) any ||= h.record('k', Math.round(i * step), SPEC).alert;
    expect(any).toBe(false);
  });

  it('uses a half-open window: exactly windowMs apart is outside', () => {
    const h = new PresentationHistory();
    const cfg = { threshold: 1, windowMs: 1_000 };
    h.record('k', 0, cfg);
    expect(h.record('k', 1_000, cfg).alert).toBe(false);
    expect(h.record('k', 1_999, cfg).alert).toBe(true);
  });

  it('reads the settings on every presentation', () => {
    const h = new PresentationHistory();
    for (let t = 0; t < 5; t++) expect(h.record('k', t, SPEC).alert).toBe(false);
    expect(h.record('k', 5, { threshold: 5, windowMs: 1_000 }).alert).toBe(true);
  });

  it('replaces nonsense settings with the SPEC numbers', () => {
    expect(saneAlert({ threshold: 0, windowMs: Number.NaN })).toEqual(SPEC);
    expect(saneAlert({ threshold: 3.7, windowMs: 5 })).toEqual({ threshold: 3, windowMs: 5 });
  });

  it('is bounded: at most maxIdentities identities, each at most max(threshold + 1, 64) times', () => {
    const h = new PresentationHistory(100);
    for (let i = 0; i < 1_000; i++) h.record(`k${i}`, i, SPEC);
    expect(h.size).toBe(100);
    const r = new PresentationHistory();
    for (let t = 0; t < 1_000; t++) r.record('k', t, { threshold: 3, windowMs: 10_000 });
    expect(r.record('k', 1_000, { threshold: 3, windowMs: 10_000 }).inWindow).toBe(64);
    const big = new PresentationHistory();
    for (let t = 0; t < 1_000; t++) big.record('k', t, { threshold: 500, windowMs: 10_000 });
    expect(big.record('k', 1_000, { threshold: 500, windowMs: 10_000 }).inWindow).toBe(501);
    // The threshold lowered: the 501 times are cut to the newest 64 at once, then one goes as
    // each comes; the newest are the ones kept (the window counts them).
    expect(big.record('k', 1_001, { threshold: 3, windowMs: 10_000 }).inWindow).toBe(64);
    expect(big.record('k', 1_002, { threshold: 3, windowMs: 10_000 }).inWindow).toBe(64);
    expect(big.record('k', 1_003, { threshold: 3, windowMs: 63 }).inWindow).toBe(63);
  });

  it('drops the least recently presented identity, whatever was presented again, cleared or copied (property)', () => {
    // A reference model: identities in order of their last presentation, each with its count.
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.array(
          fc.oneof(
            { weight: 20, arbitrary: fc.integer({ min: 0, max: 12 }) },
            { weight: 1, arbitrary: fc.constantFrom('clear' as const, 'clone' as const) }
          ),
          { maxLength: 200 }
        ),
        (max, steps) => {
          let h = new PresentationHistory(max);
          let model: { key: string; n: number }[] = [];
          const settings = { threshold: 1_000, windowMs: 1_000_000 };
          for (const [t, step] of steps.entries()) {
            if (step === 'clear') {
              h.clear();
              model = [];
              continue;
            }
            if (step === 'clone') {
              h = new CloneMap().get(h);
              continue;
            }
            const key = `k${step}`;
            const at = model.findIndex((e) => e.key === key);
            const n = at < 0 ? 1 : model.splice(at, 1)[0]!.n + 1;
            model.push({ key, n });
            if (model.length > max) model.shift();
            if (h.record(key, t, settings).inWindow !== n || h.size !== model.length) return false;
          }
          return true;
        }
      )
    );
  });

  // Found by the scenario fuzz (FUZZ_SEED=1757073423 FUZZ_PATH=45): a mid-run edit widened the
  // window from 1,003 ms to 158,029 ms, and a history already pruned by the old window missed a
  // loop of 33 presentations that the guarantee counted under the new one.
  it('counts the past under a window widened mid-run', () => {
    const h = new PresentationHistory();
    const narrow = { threshold: 32, windowMs: 1_003 };
    for (let i = 0; i < 32; i++) expect(h.record('k', i * 4_000, narrow).alert).toBe(false);
    const wide = { threshold: 32, windowMs: 158_029 };
    const r = h.record('k', 32 * 4_000, wide);
    expect(r).toEqual({ inWindow: 33, alert: true });
  });

  it('agrees with a brute-force count over any presentation times (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 5_000 }), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 3_000 }),
        (gaps, threshold, windowMs) => {
          const h = new PresentationHistory();
          const times: number[] = [];
          let t = 0;
          for (const g of gaps) {
            t += g;
            times.push(t);
            const { alert } = h.record('k', t, { threshold, windowMs });
            const inWindow = times.filter((x) => t - x < windowMs).length;
            if (alert !== inWindow - 1 >= threshold) return false;
          }
          return true;
        }
      )
    );
  });
});
