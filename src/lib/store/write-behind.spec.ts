import { describe, expect, it } from 'vitest';
import { MAX_BATCH, WriteBehind } from './write-behind';

type Op = { k: string | null; v: number };

function writer(fail: () => boolean) {
  const written: Op[][] = [];
  const committed: Op[][] = [];
  const w = new WriteBehind<Op>({
    noun: 'op(s)',
    storeName: 'test',
    keyOf: (o) => o.k,
    write: async (batch) => {
      if (fail()) throw new DOMException('full', 'QuotaExceededError');
      written.push([...batch]);
    },
    committed: (batch) => committed.push([...batch])
  });
  return { w, written, committed };
}

describe('WriteBehind', () => {
  it('coalesces by key between barriers and writes one batch per flush', async () => {
    const { w, written } = writer(() => false);
    w.enqueue({ k: 'a', v: 1 });
    w.enqueue({ k: 'a', v: 2 });
    w.enqueue({ k: null, v: 0 });
    w.enqueue({ k: 'a', v: 3 });
    expect(w.pending).toBe(3);
    expect(await w.flush()).toBe(true);
    expect(written).toEqual([
      [
        { k: 'a', v: 2 },
        { k: null, v: 0 },
        { k: 'a', v: 3 }
      ]
    ]);
    expect(w.pending).toBe(0);
  });

  it('writes a long queue in transactions of at most MAX_BATCH ops, in order; a failure holds the rest', async () => {
    let writes = 0;
    const { w, written, committed } = writer(() => ++writes === 3);
    const n = 2 * MAX_BATCH + MAX_BATCH / 2 + 7;
    for (let i = 0; i < n; i++) w.enqueue({ k: null, v: i });
    expect(await w.flush()).toBe(false);
    expect(written.map((b) => b.length)).toEqual([MAX_BATCH, MAX_BATCH]);
    expect(committed.flat().map((o) => o.v)).toEqual([...Array(2 * MAX_BATCH).keys()]);
    expect(w.pending).toBe(n - 2 * MAX_BATCH);
    expect(await w.retry()).toBe(true);
    expect(written.flat().map((o) => o.v)).toEqual([...Array(n).keys()]);
    expect(w.pending).toBe(0);
  });

  it("an owner's maxBatch and weightOf: ops a transaction, and what is held counted by weight (in flight too)", async () => {
    let release: () => void = () => {};
    const written: number[][] = [];
    const w = new WriteBehind<{ rows: number }>({
      noun: 'row(s)',
      storeName: 'test',
      maxBatch: 2,
      weightOf: (op) => op.rows,
      write: async (batch) => {
        await new Promise<void>((r) => (release = r));
        written.push(batch.map((o) => o.rows));
      }
    });
    for (const rows of [3, 0, 5, 7, 1]) w.enqueue({ rows });
    expect(w.pending).toBe(5);
    expect(w.pendingWeight).toBe(16);
    const flushed = w.flush();
    for (let i = 0; i < 10 && written.length < 3; i++) {
      await new Promise((r) => setTimeout(r, 0));
      // The first batch in flight is still held.
      if (written.length === 0) expect(w.pendingWeight).toBe(16);
      release();
    }
    expect(await flushed).toBe(true);
    expect(written).toEqual([[3, 0], [5, 7], [1]]);
    expect(w.pendingWeight).toBe(0);
  });

  it('a flush writes what was queued when it began: ops queued while it writes wait for the next flush, so it ends under a run that never stops queuing', async () => {
    const written: number[][] = [];
    let feed = 0;
    const w: WriteBehind<Op> = new WriteBehind<Op>({
      noun: 'op(s)',
      storeName: 'test',
      write: async (batch) => {
        await new Promise((r) => setTimeout(r, 0));
        written.push(batch.map((o) => o.v));
        // The run goes on between transactions: more ops every time one is written.
        for (let i = 0; i < 3; i++) w.enqueue({ k: null, v: 100 + feed++ });
      }
    });
    const n = MAX_BATCH + 2;
    for (let i = 0; i < n; i++) w.enqueue({ k: null, v: i });
    expect(await w.flush()).toBe(true);
    expect(written.map((b) => b.length)).toEqual([MAX_BATCH, 2]);
    expect(w.pending).toBe(6);
    expect(await w.flush()).toBe(true);
    expect(written.at(-1)).toEqual([100, 101, 102, 103, 104, 105]);
    expect(w.pending).toBe(3);
  });

  it('reports committed only after the write succeeds; a failure holds everything, compacted', async () => {
    let failing = true;
    const { w, committed } = writer(() => failing);
    for (let i = 0; i < 1_000; i++) w.enqueue({ k: `id-${i % 3}`, v: i });
    expect(await w.flush()).toBe(false);
    expect(committed).toHaveLength(0);
    expect(w.failure).toMatchObject({ kind: 'quota' });
    expect(w.failure?.error).toMatch(/^Could not write 3 op\(s\)/);
    // While held, a hot key costs one queued op, not one per change.
    for (let i = 0; i < 1_000; i++) w.enqueue({ k: `id-${i % 3}`, v: 1_000 + i });
    expect(w.pending).toBe(3);
    expect(await w.flush()).toBe(false);
    failing = false;
    expect(await w.retry()).toBe(true);
    expect(w.failure).toBeNull();
    expect(committed.flat().map((o) => o.v)).toEqual([1_999, 1_997, 1_998]);
  });

  it('a timeout from outside marks it failed in words', async () => {
    const { w } = writer(() => false);
    w.fail({ kind: 'timeout', words: 'the browser did not answer', error: 'x' });
    w.enqueue({ k: 'a', v: 1 });
    expect(await w.flush()).toBe(false);
    expect(w.pending).toBe(1);
  });

  it('a write that never settles, given up by the time limit: flush answers at once, retry writes it again', async () => {
    let hang = true;
    const written: Op[][] = [];
    const committed: Op[][] = [];
    let late: (() => void) | undefined;
    const w = new WriteBehind<Op>({
      noun: 'op(s)',
      storeName: 'test',
      keyOf: (o) => o.k,
      write: (batch) => {
        if (hang) return new Promise<void>((resolve) => (late = resolve));
        written.push([...batch]);
        return Promise.resolve();
      },
      committed: (batch) => committed.push([...batch])
    });
    w.enqueue({ k: 'a', v: 1 });
    const stuck = w.flush();
    await Promise.resolve();
    expect(w.pending).toBe(1);
    w.fail({ kind: 'timeout', words: 'the browser did not finish writing in time', error: 'x' });
    // The batch is queued again, not lost, and a flush says at once that nothing is written.
    expect(w.pending).toBe(1);
    w.enqueue({ k: 'b', v: 2 });
    expect(await w.flush()).toBe(false);
    // Retry (a fresh connection) does not wait behind the transaction that never answered.
    hang = false;
    expect(await w.retry()).toBe(true);
    expect(written).toEqual([
      [
        { k: 'a', v: 1 },
        { k: 'b', v: 2 }
      ]
    ]);
    // Its answer, coming after all, is not counted a second time.
    late!();
    expect(await stuck).toBe(false);
    expect(committed.flat()).toEqual([
      { k: 'a', v: 1 },
      { k: 'b', v: 2 }
    ]);
    expect(w.commits).toBe(1);
  });
});
