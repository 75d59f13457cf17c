import 'fake-indexeddb/auto';
import { createStore } from 'idb-keyval';
import { describe, expect, it } from 'vitest';
import { emptyCounters } from '$lib/sim/engine/metrics';
import { ProgressStore } from './progress';

describe('lesson progress in IndexedDB', () => {
  it('keeps a prediction, then completion with the run’s numbers, per lesson', async () => {
    const store = new ProgressStore(createStore('progress-test-1', 'progress'));
    expect(await store.get('tired-user')).toEqual({ name: 'tired-user' });
    await store.update('tired-user', { answer: 'A' });
    const A = { ...emptyCounters(), consentPrompts: 114 };
    const series = { t: [0], values: {} as never };
    await store.update('tired-user', {
      completed: true,
      result: {
        lanes: { A, B: emptyCounters() },
        series: { A: series, B: series },
        labels: { A: 'a', B: 'b' },
        start: 0,
        now: 1
      }
    });
    const got = await store.get('tired-user');
    expect(got.answer).toBe('A');
    expect(got.completed).toBe(true);
    expect(got.result?.lanes.A.consentPrompts).toBe(114);
    expect((await store.all()).map((p) => p.name)).toEqual(['tired-user']);
  });

  it('survives a new store object on the same database (a reload)', async () => {
    const db = createStore('progress-test-2', 'progress');
    await new ProgressStore(db).update('reconnect-bypass', { answer: 12 });
    expect((await new ProgressStore(db).get('reconnect-bypass')).answer).toBe(12);
  });
});
