/**
 * The time limit on a group commit (run-storage.ts): a write that never settles marks storage as
 * failed, in words, and the run goes on from memory. The limit is on the time without progress,
 * not on the whole flush: a flush writes its queue batch by batch (5,000 rows a transaction), and
 * on a busy machine a long backlog took more than the limit while every batch committed — storage
 * was then reported failed while it was writing fine, and a simulated week stopped on day 5 with
 * 250,000 rows held in memory (issue #19).
 */
import type { StorageFailure } from '../../store/write-behind';

export interface LimitedWriter {
  flush(): Promise<boolean>;
  /** Batches committed so far. */
  readonly writeProgress: number;
  fail(f: StorageFailure): void;
}

/**
 * Flush `w`; fail it when `limitMs` pass with no batch committed. Resolves when the flush has
 * settled or the writer is marked failed.
 */
export async function flushWithin(w: LimitedWriter, limitMs: number): Promise<void> {
  const done = w.flush();
  for (;;) {
    const seen = w.writeProgress;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), limitMs);
    });
    const r = await Promise.race([done, timeout]);
    clearTimeout(timer);
    if (r !== 'timeout') return;
    if (w.writeProgress !== seen) continue;
    w.fail({
      kind: 'timeout',
      words: 'the browser did not finish writing in time',
      error: `A write to IndexedDB did not finish within ${limitMs / 1000} s.`
    });
    return;
  }
}
