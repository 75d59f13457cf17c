/**
 * A seeded PRNG (sfc32, seeded through splitmix32). The simulation never calls Math.random:
 * the same seed gives the same run in Node, in a Web Worker and in the page.
 *
 * `fork(label)` derives an independent stream from the seed and a label, so each server of each
 * lane draws from its own stream. Without that, one server's extra retry in lane B would shift
 * every later random draw of every other server, and the two lanes would differ for reasons that
 * have nothing to do with their configuration.
 */

function splitmix32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

/** FNV-1a over a string: turns labels into seed material. */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

import { copyable } from '../../machine/clone';

/** The largest seed: seeds are 32-bit. */
export const MAX_SEED = 0xffffffff;

/**
 * A seed as a person types it, in `lab --seed` and the page's seed field alike: a plain decimal
 * integer from 0 to {@link MAX_SEED}, else null. Not `Number()`, which takes '' as 0 and `0x10`,
 * `1e3` or ' 7 ' as numbers: a typo then ran silently with another seed.
 */
export function seedFromText(text: string): number | null {
  if (!/^(0|[1-9]\d{0,9})$/.test(text)) return null;
  const n = Number(text);
  return n <= MAX_SEED ? n : null;
}

export class Rng {
  readonly seed: number;
  // Plain private fields, not #private: the generic copier (clone.ts) copies them.
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    this.seed = seed >>> 0;
    const sm = splitmix32(this.seed);
    this.a = sm();
    this.b = sm();
    this.c = sm();
    this.d = sm();
    for (let i = 0; i < 12; i++) this.nextUint32();
  }

  nextUint32(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) >>> 0;
    return t;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Uniform integer in [lo, hi] (inclusive). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return p > 0 && this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('Rng.pick on an empty list');
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** Exponentially distributed with the given mean (inter-arrival times of a Poisson process). */
  exponential(mean: number): number {
    return -Math.log(1 - this.next()) * mean;
  }

  /** A value in [base·(1−j), base·(1+j)]: jitter around a delay. */
  jitter(base: number, j: number): number {
    return base * (1 - j + 2 * j * this.next());
  }

  /** An independent stream for a label, from the same seed. */
  fork(label: string): Rng {
    return new Rng((this.seed ^ hashString(label)) >>> 0);
  }
}

// A copy is at the same point of the same stream: the two draw the same numbers from here on.
copyable(Rng, { name: 'rng.Rng', blank: () => new Rng(0) });
