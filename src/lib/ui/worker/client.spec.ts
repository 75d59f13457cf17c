import { describe, expect, it } from 'vitest';
import type { Reply, WorkerReply, WorkerRequest } from '$lib/sim/session/protocol';
import { SimClient } from './client';

/** A worker whose answers the test posts by hand, in any order. */
function manualWorker() {
  const got: WorkerRequest[] = [];
  const w = {
    onmessage: null as ((e: MessageEvent<WorkerReply>) => void) | null,
    postMessage(req: WorkerRequest) {
      got.push(req);
    },
    terminate() {}
  };
  const answer = (re: number | null, reply: Reply) =>
    w.onmessage?.({ data: { re, reply } } as MessageEvent<WorkerReply>);
  return { worker: w as unknown as Worker, got, answer };
}

describe('the worker client', () => {
  it('sends every command with an id of its own', () => {
    const m = manualWorker();
    const c = new SimClient(m.worker);
    const a = c.send({ type: 'step' });
    const b = c.send({ type: 'cancel' });
    expect(a).not.toBe(b);
    expect(m.got).toEqual([
      { id: a, cmd: { type: 'step' } },
      { id: b, cmd: { type: 'cancel' } }
    ]);
  });

  it('an error from one command does not reject a request waiting on another', async () => {
    const m = manualWorker();
    const c = new SimClient(m.worker);
    const cleared = c.request({ type: 'clearStored', lane: 'A' }, 'cleared');
    const stepId = c.send({ type: 'step' });
    const clearId = m.got[0]!.id;
    m.answer(stepId, { type: 'error', message: 'step failed: nothing loaded' });
    m.answer(null, { type: 'error', message: 'unasked' });
    // A reply of the awaited type to another request does not resolve it either.
    m.answer(stepId, { type: 'cleared', lane: 'A', count: 99 });
    m.answer(clearId, { type: 'cleared', lane: 'A', count: 3 });
    await expect(cleared).resolves.toEqual({ type: 'cleared', lane: 'A', count: 3 });
  });

  it('rejects a request with the error its own command caused', async () => {
    const m = manualWorker();
    const c = new SimClient(m.worker);
    const p = c.request({ type: 'retryStorage' }, 'snapshot');
    m.answer(m.got[0]!.id, { type: 'error', message: 'the disk is gone' });
    await expect(p).rejects.toThrow('the disk is gone');
  });

  it('hands every reply, asked for or not, to the listeners with the id it answers', () => {
    const m = manualWorker();
    const c = new SimClient(m.worker);
    const seen: [string, number | null][] = [];
    const off = c.on((r, re) => seen.push([r.type, re]));
    m.answer(7, { type: 'error', message: 'x' });
    m.answer(null, { type: 'fastForwardDone', cancelled: true });
    off();
    m.answer(8, { type: 'error', message: 'y' });
    expect(seen).toEqual([
      ['error', 7],
      ['fastForwardDone', null]
    ]);
  });
});
