/**
 * Seeks restored in place from engine checkpoints (issue #10), with storage as the browser's
 * worker gives it: the run keeps its namespace; the log holds the timeline's rows as far as it was
 * played, so a seek back leaves them and playing on writes none twice; a change cuts the later
 * ones; the page's table (here, a list fed the way the worker feeds its index) shows exactly the
 * rows up to t, and the durable lane holds exactly the decisions of t.
 */
import { describe, expect, it } from 'vitest';
import type { AuditRecord } from '../../machine/types';
import { parsePolicy } from '../../machine/policy';
import { Simulation, type SimulationOptions } from '../engine/engine';
import { parseScenario, type LaneId } from '../input/scenario';
import { Session, type RunStorage } from './session';
import { DiskStore, MemoryAuditLog } from './run-storage.testing';
import { only, readScenario as read } from './replies.testing';
import type { Reply } from './protocol';

function namespace() {
  const stores = { A: new DiskStore(), B: new DiskStore() };
  const log = new MemoryAuditLog();
  const storage: RunStorage = {
    run: 'r-test',
    durable: (lane: LaneId) => stores[lane],
    durableError: null,
    audit: log,
    auditError: null
  };
  return { storage, stores, log };
}

/** The page's table, fed as the worker feeds its index (sim.worker.ts). */
class Table {
  rows: AuditRecord[] = [];
  constructor(readonly log: MemoryAuditLog) {}
  take(rs: Reply[]): Reply[] {
    for (const r of rs) {
      if (r.type === 'seeked' && r.inPlace) {
        if (r.auditRows <= this.rows.length) this.rows.length = r.auditRows;
        else this.rows.push(...this.log.rows.slice(this.rows.length, r.auditRows));
      }
      if (r.type === 'snapshot') this.rows.push(...r.audit);
    }
    return rs;
  }
}

const MIN = 60_000;
const json = (rows: readonly AuditRecord[]) => rows.map((r) => JSON.stringify(r)).join('\n');

/** The engine in Node run straight to `t` (with `edits` applied where they were): its rows. */
function straight(data: unknown, t: number, edit?: (sim: Simulation) => void) {
  const p = parseScenario(data);
  if (!p.ok) throw new Error('bad scenario');
  const rows: AuditRecord[] = [];
  const opts: SimulationOptions = { onAudit: (r) => void rows.push(r) };
  const sim = new Simulation(p.scenario, opts);
  if (edit) edit(sim);
  sim.advanceTo(t);
  return { rows, sim };
}

describe('seeks restored in place', () => {
  it('back and forth: the table, the log and the durable lane are those of the run at t', () => {
    const data = read('reconnect-bypass');
    const { storage, stores, log } = namespace();
    const s = new Session({ storage, copyEvery: 200 });
    const table = new Table(log);
    const [l] = only(table.take(s.handle({ type: 'load', scenario: data })), 'loaded');
    if (!l?.ok) throw new Error('not loaded');
    table.take(s.handle({ type: 'seek', t: l.end }));
    expect(json(log.rows)).toBe(json(straight(data, l.end).rows));
    expect(s.engineCheckpoints.list.length).toBeGreaterThan(3);

    // Back to 30 min: from a checkpoint, in place; the log keeps the later rows of the timeline.
    const t1 = l.start + 30 * MIN + 17;
    const [back] = only(table.take(s.handle({ type: 'seek', t: t1 })), 'seeked');
    expect(back).toMatchObject({ inPlace: true });
    const at1 = straight(data, t1);
    expect(json(table.rows)).toBe(json(at1.rows));
    expect(log.rows.length).toBe(straight(data, l.end).rows.length);
    expect(JSON.stringify(stores.B.entries())).toBe(
      JSON.stringify(at1.sim.lanes.B.host.store.entries())
    );

    // Forward to 55 min: a checkpoint well ahead serves it; the table reads the rows from the log.
    const t2 = l.start + 55 * MIN;
    const copies = s.copyRestores;
    const [fwd] = only(table.take(s.handle({ type: 'seek', t: t2 })), 'seeked');
    expect(fwd).toMatchObject({ inPlace: true });
    expect(s.copyRestores).toBe(copies + 1);
    expect(json(table.rows)).toBe(json(straight(data, t2).rows));

    // A change at 55 min starts a new branch: the log's later rows go; playing on writes the new.
    const policy = parsePolicy({
      version: 1,
      defaults: { ...(data.lanes as { A: { policy: { defaults: object } } }).A.policy.defaults },
      servers: {}
    });
    if (!policy.ok) throw new Error('bad policy');
    policy.policy.defaults.consent = 'deny';
    table.take(s.handle({ type: 'setPolicy', lane: 'A', policy: policy.policy }));
    table.take(s.handle({ type: 'seek', t: l.end }));
    const edited = straight(data, l.end, (sim) => {
      sim.advanceTo(t2);
      sim.setLanePolicy('A', policy.policy);
    });
    expect(json(log.rows)).toBe(json(edited.rows));
    expect(json(table.rows)).toBe(json(edited.rows));
  });

  it("forward while the log's writes are behind: runs there rather than wait for the disk", () => {
    // The worker reads the rows a checkpoint ahead skips from the log only once every queued write
    // is on disk; a day's run leaves minutes of them queued, so the run goes there instead.
    const data = read('reconnect-bypass');
    const { storage, log } = namespace();
    let held = 0;
    log.status = () => ({ saved: log.rows.length - held, heldInMemory: held, failure: null });
    const s = new Session({ storage, copyEvery: 200 });
    const table = new Table(log);
    const [l] = only(table.take(s.handle({ type: 'load', scenario: data })), 'loaded');
    if (!l?.ok) throw new Error('not loaded');
    table.take(s.handle({ type: 'seek', t: l.end }));
    const all = json(log.rows);
    table.take(s.handle({ type: 'seek', t: l.start + 30 * MIN + 17 }));

    held = 1;
    const t2 = l.start + 55 * MIN;
    const copies = s.copyRestores;
    const [fwd] = only(table.take(s.handle({ type: 'seek', t: t2 })), 'seeked');
    expect(fwd?.inPlace).toBeUndefined();
    expect(s.copyRestores).toBe(copies);
    expect(json(table.rows)).toBe(json(straight(data, t2).rows));
    // The rows it made again were in the log: none written twice.
    expect(json(log.rows)).toBe(all);

    // Back again, the writes done: the checkpoint ahead serves the seek forward.
    table.take(s.handle({ type: 'seek', t: l.start + 30 * MIN + 17 }));
    held = 0;
    const [again] = only(table.take(s.handle({ type: 'seek', t: t2 })), 'seeked');
    expect(again).toMatchObject({ inPlace: true });
    expect(s.copyRestores).toBe(copies + 2);
    expect(json(table.rows)).toBe(json(straight(data, t2).rows));
  });
});
