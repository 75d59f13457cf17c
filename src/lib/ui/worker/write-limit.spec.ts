import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { StorageFailure } from '../../store/write-behind';
import { flushWithin } from './write-limit';

/** A writer whose flush commits a batch every `everyMs` for `batches` batches (0: never settles). */
function slowWriter(batches: number, everyMs: number) {
  const w = {
    writeProgress: 0,
    failure: null as StorageFailure | null,
    flush: () =>
      new Promise<boolean>((resolve) => {
        if (batches === 0) return;
        const tick = () => {
          w.writeProgress += 1;
          if (w.writeProgress >= batches) resolve(true);
          else setTimeout(tick, everyMs);
        };
        setTimeout(tick, everyMs);
      }),
    fail(f: StorageFailure) {
      w.failure ??= f;
    }
  };
  return w;
}

describe('the time limit on a group commit', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  // Issue #19: a week's fast-forward stopped on day 5 — a commit of a long backlog on a busy
  // machine ran past 8 s while every batch committed, and storage was reported failed.
  it('a flush that keeps committing batches is not failed, however long it takes', async () => {
    const w = slowWriter(6, 5_000);
    const done = flushWithin(w, 8_000);
    await vi.advanceTimersByTimeAsync(30_000);
    await done;
    expect(w.writeProgress).toBe(6);
    expect(w.failure).toBeNull();
  });

  it('a flush with no batch committed within the limit is failed, in words', async () => {
    const w = slowWriter(0, 0);
    const done = flushWithin(w, 8_000);
    await vi.advanceTimersByTimeAsync(7_999);
    expect(w.failure).toBeNull();
    await vi.advanceTimersByTimeAsync(1);
    await done;
    expect(w.failure).toEqual({
      kind: 'timeout',
      words: 'the browser did not finish writing in time',
      error: 'A write to IndexedDB did not finish within 8 s.'
    });
  });

  it('one batch stuck after others committed is failed a limit after the last commit', async () => {
    const w = slowWriter(0, 0);
    w.flush = () =>
      new Promise<boolean>(() => {
        setTimeout(() => (w.writeProgress = 1), 3_000);
      });
    const done = flushWithin(w, 8_000);
    await vi.advanceTimersByTimeAsync(8_000);
    expect(w.failure).toBeNull();
    await vi.advanceTimersByTimeAsync(8_000);
    await done;
    expect(w.failure?.kind).toBe('timeout');
  });
});
