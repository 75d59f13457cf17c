/**
 * The store lifetimes as an engine checkpoint holds them (store/checkpoint-memo.ts): a flat list
 * of keys and states shared with the run, never run itself, and a copy of it that judges as the
 * run did from the checkpoint on, whatever the run did after it.
 */
import { describe, expect, it } from 'vitest';
import { record, T0 } from './invariants/records.testing';
import type { AuditRecord } from '../../machine/types';
import { CloneMap } from '../../machine/clone';
import { CheckpointMemo, copyAsCheckpoint } from '../../store/checkpoint-memo';
import { decision } from '../../store/decision.testing';
import { LifetimeTracker } from './lifetimes';

const dialog = (over: Partial<AuditRecord>) =>
  record({ consentShown: true, consent: 'denied', durationMs: 3_000, ...over });
const commit = (x: LifetimeTracker, t: number, identity: string, expiresAt: number | null) =>
  x.store('A', t, {
    type: 'commit',
    scope: 'durable',
    connection: 's#1',
    decision: decision({ server: 's', identity, expiresAt, policyHash: 'h' })
  });
/** Dialogs for two identities, one stored decision live over them: what the tracker judges. */
const tail = (x: LifetimeTracker) => [
  x.dialog('A', dialog({ requestId: 2, server: 's', identity: 's:a', t: T0 + 30_000 })),
  x.dialog('A', dialog({ requestId: 3, server: 's', identity: 's:b', t: T0 + 31_000 })),
  commit(x, T0 + 32_000, 's:b', T0 + 90_000),
  x.dialog('A', dialog({ requestId: 4, server: 's', identity: 's:b', t: T0 + 40_000 })),
  x.dialog('A', dialog({ requestId: 5, server: 's', identity: 's:a', t: T0 + 41_000 }))
];

describe('LifetimeTracker in engine checkpoints', () => {
  it('a checkpoint taken before the run went on judges, once copied, as the run did from there', () => {
    const run = new LifetimeTracker();
    run.store('A', T0, { type: 'opened', scope: 'durable', held: [] });
    commit(run, T0 + 1_000, 's:a', T0 + 60_000);
    const cp = copyAsCheckpoint(new CheckpointMemo(), () => new CloneMap().get(run));
    const fromRun = tail(run);
    // The run's changes after the checkpoint (a new lifetime for s:b, spans on s:a) are not in it.
    expect(tail(new CloneMap().get(cp))).toEqual(fromRun);
    expect(fromRun.map((x) => x?.kind ?? null)).toEqual(['stored', null, null, 'stored', 'stored']);
    // The checkpoint itself is never run.
    expect(() => cp.dialog('A', dialog({ requestId: 9, t: T0 + 50_000 }))).toThrow(/never run/);
  });

  it('a checkpoint holds the states as a list, shared with the run until the run changes them', () => {
    const run = new LifetimeTracker();
    run.store('A', T0, { type: 'opened', scope: 'durable', held: [] });
    commit(run, T0 + 1_000, 's:a', null);
    commit(run, T0 + 2_000, 's:b', null);
    const memo = new CheckpointMemo();
    const a = copyAsCheckpoint(memo, () => new CloneMap().get(run));
    commit(run, T0 + 3_000, 's:b', null);
    const b = copyAsCheckpoint(memo, () => new CloneMap().get(run));
    const flat = (x: LifetimeTracker) => x['frozen'] as unknown[];
    expect(flat(a).filter((v) => typeof v === 'string')).toHaveLength(2);
    expect(flat(b)[1]).toBe(flat(a)[1]);
    expect(flat(b)[3]).not.toBe(flat(a)[3]);
    expect(run.checkpointBytes()).toBeLessThan(run.approxBytes());
  });
});
