import { describe, expect, it } from 'vitest';
import { Simulation } from '../engine/engine';
import { LANE_IDS, parseScenario, type LaneId } from '../input/scenario';
import { Session, type RunStorage } from './session';
import { DiskStore, MemoryAuditLog } from './run-storage.testing';
import { liveDecisions } from '../../store/decision-store';
import { only, readScenario as read, snap } from './replies.testing';
import { auditLineJson } from '../report/report';

/** A durable store that, like the browser's, says what is on disk (the session counts it as resumed). */

/** One run's namespace: the same stores outlive a session, as IndexedDB outlives a page. */
function namespace(): RunStorage & { stores: Record<LaneId, DiskStore> } {
  const stores = { A: new DiskStore(), B: new DiskStore() };
  return {
    run: 'r-test',
    stores,
    durable: (lane) => stores[lane],
    durableError: null,
    audit: null,
    auditError: null
  };
}

const MIN = 60_000;

describe('a reload mid-run (load with `at`)', () => {
  it('resumes at t: lane A lost its decisions, lane B kept the stored ones, and the run then equals --restart-at t', () => {
    const data = read('reconnect-bypass');
    const disk = namespace();
    const before = new Session({ storage: disk });
    const [l] = before.handle({ type: 'load', scenario: data });
    if (l?.type !== 'loaded' || !l.ok) throw new Error('not loaded');
    const t = l.start + 25 * MIN + 137;
    const was = snap(before.handle({ type: 'advance', to: t }));
    const [timeline] = only(before.handle({ type: 'timeline' }), 'timeline');
    expect(timeline!.t).toBe(t);
    const liveA = was.lanes.A.storedDecisions;
    const liveB = liveDecisions(disk.stores.B, t);
    expect(liveA).toBeGreaterThan(0);
    expect(liveB).toBeGreaterThan(0);

    const after = new Session({ storage: disk });
    const rs = after.handle({
      type: 'load',
      scenario: data,
      resume: 'r-test',
      at: { t, actions: timeline!.actions }
    });
    const [loaded] = only(rs, 'loaded');
    expect(loaded).toMatchObject({ ok: true, resumed: { A: 0, B: disk.stores.B.count() } });
    const [restarted] = only(rs, 'restarted');
    expect(restarted!.report.t).toBe(t);
    expect(restarted!.report.lanes.A).toMatchObject({ scope: 'connection', lost: liveA, kept: 0 });
    expect(restarted!.report.lanes.B).toMatchObject({ scope: 'durable', lost: 0, kept: liveB });
    expect(restarted!.notice).toBe(
      `Client restarted: lane A lost ${liveA} stored decisions, lane B kept ${liveB} stored decisions`
    );
    const end = snap(after.handle({ type: 'advance', to: l.end }));
    // The durable lane went on in the namespace's store, not a copy: later decisions are there.
    const entries = disk.stores.B.entries() as { decidedAt: number }[];
    expect(entries.some((d) => d.decidedAt > t)).toBe(true);

    const parsed = parseScenario(data);
    if (!parsed.ok) throw new Error('bad scenario');
    const cli = new Simulation(parsed.scenario, { restartAt: [t - l.start] });
    cli.advanceTo(cli.end);
    for (const id of LANE_IDS)
      expect(end.lanes[id].counters).toEqual(cli.lanes[id].metrics.counters);
  });

  it('re-applies the timeline’s actions, a restart among them, where they were', () => {
    const data = read('reconnect-bypass');
    const disk = namespace();
    const before = new Session({ storage: disk });
    const [l] = before.handle({ type: 'load', scenario: data });
    if (l?.type !== 'loaded' || !l.ok) throw new Error('not loaded');
    before.handle({ type: 'advance', to: l.start + 10 * MIN + 11 });
    before.handle({ type: 'restart' });
    const t = l.start + 30 * MIN + 5;
    before.handle({ type: 'advance', to: t });
    const [timeline] = only(before.handle({ type: 'timeline' }), 'timeline');
    expect(timeline!.actions.map((a) => a.kind)).toEqual(['restart']);

    const after = new Session({ storage: disk });
    after.handle({ type: 'load', scenario: data, at: { t, actions: timeline!.actions } });
    const end = snap(after.handle({ type: 'advance', to: l.end }));
    // Two marks a restart: the one on the timeline, the reload's, and the scenario's own at 30 min.
    expect(end.marks.filter((m) => m.kind === 'restart')).toHaveLength(6);
    const parsed = parseScenario(data);
    if (!parsed.ok) throw new Error('bad scenario');
    const cli = new Simulation(parsed.scenario, { restartAt: [10 * MIN + 11, t - l.start] });
    cli.advanceTo(cli.end);
    for (const id of LANE_IDS)
      expect(end.lanes[id].counters).toEqual(cli.lanes[id].metrics.counters);
  });
});

describe('a run is never handed decisions from after its clock (issue #18 item 7)', () => {
  it('a namespace whose decisions postdate the clock it is handed at breaks no-future-decisions', () => {
    const data = read('reconnect-bypass');
    const disk = namespace();
    const before = new Session({ storage: disk });
    const [l] = before.handle({ type: 'load', scenario: data });
    if (l?.type !== 'loaded' || !l.ok) throw new Error('not loaded');
    snap(before.handle({ type: 'advance', to: l.end }));
    const held = disk.stores.B.count();
    expect(held).toBeGreaterThan(0);
    // What the page did on a reload after the end: the run's namespace at a fresh clock.
    const after = new Session({ storage: disk });
    after.handle({ type: 'load', scenario: data, resume: 'r-test' });
    const view = snap(after.handle({ type: 'advance', to: l.start }));
    const g = view.guarantees.find((x) => x.id === 'no-future-decisions');
    expect(g).toMatchObject({ status: 'broken', violations: held, checked: held });
    expect(g!.offenders[0]).toMatchObject({ lane: 'B', t: l.start });
  });

  it('a reload at the end resumes there: the decisions handed over are the run’s own, none later', () => {
    const data = read('reconnect-bypass');
    const disk = namespace();
    const before = new Session({ storage: disk });
    const [l] = before.handle({ type: 'load', scenario: data });
    if (l?.type !== 'loaded' || !l.ok) throw new Error('not loaded');
    const end = snap(before.handle({ type: 'advance', to: l.end }));
    const [timeline] = only(before.handle({ type: 'timeline' }), 'timeline');
    const after = new Session({ storage: disk });
    const rs = after.handle({
      type: 'load',
      scenario: data,
      resume: 'r-test',
      at: { t: timeline!.t, actions: timeline!.actions }
    });
    expect(only(rs, 'restarted')[0]!.report.t).toBe(l.end);
    const view = snap(after.handle({ type: 'advance', to: l.end }));
    expect(view.lanes.B.counters).toEqual(end.lanes.B.counters);
    // Held, so not listed (handover.ts); nothing broken.
    expect(view.guarantees.some((x) => x.id === 'no-future-decisions')).toBe(false);
    expect(view.guarantees.filter((x) => x.status === 'broken')).toEqual([]);
  });
});

describe('runs are isolated', () => {
  it('a new load after a seek back carries none of the old run’s later edits', () => {
    const data = read('reconnect-bypass');
    const s = new Session();
    const [l] = s.handle({ type: 'load', scenario: data });
    if (l?.type !== 'loaded' || !l.ok) throw new Error('not loaded');
    s.handle({ type: 'advance', to: l.start + 3 * MIN });
    s.handle({
      type: 'setConfig',
      lane: 'A',
      client: { store: 'durable' },
      what: 'lane A durable'
    });
    s.handle({ type: 'advance', to: l.start + 10 * MIN });
    // Back before the edit: it waits ahead, to be applied again as the run reaches it.
    s.handle({ type: 'seek', t: l.start + MIN });
    s.handle({ type: 'load', scenario: data }); // Reset: a new run of the scenario as loaded
    const end = snap(s.handle({ type: 'advance', to: l.end }));
    expect(end.marks.filter((m) => m.what === 'lane A durable')).toEqual([]);
    expect(end.lanes.A.scope).toBe('connection');
  });
});

describe('a reload whose audit writes were behind (load with `at`)', () => {
  /** The run to `t`, its namespace's log then missing its last `behind` rows, and the reload. */
  function reloadBehind(minutes: number, behind: (n: number) => number) {
    const data = read('reconnect-bypass');
    const disk = namespace();
    const log = new MemoryAuditLog();
    disk.audit = log;
    const before = new Session({ storage: disk });
    const [l] = before.handle({ type: 'load', scenario: data });
    if (l?.type !== 'loaded' || !l.ok) throw new Error('not loaded');
    const t = l.start + minutes * MIN;
    before.handle({ type: 'advance', to: t });
    const [timeline] = only(before.handle({ type: 'timeline' }), 'timeline');
    const made = log.rows.length;
    const lost = behind(made);
    // The writes behind at the reload never reached disk.
    log.truncate(made - lost);
    const after = new Session({ storage: disk });
    const rs = after.handle({
      type: 'load',
      scenario: data,
      resume: 'r-test',
      at: { t, actions: timeline!.actions }
    });
    const [loaded] = only(rs, 'loaded');
    expect(loaded).toMatchObject({ ok: true, auditRows: made });
    const parsed = parseScenario(data);
    if (!parsed.ok) throw new Error('bad scenario');
    const cli: string[] = [];
    const sim = new Simulation(parsed.scenario, { onAudit: (r) => cli.push(auditLineJson(r)) });
    sim.advanceTo(t);
    return { log, made, lost, cli, shown: after.drainAudit() };
  }

  it('writes the rows the log lacked again, in order, the same as lab run; the table gets them first', () => {
    const { log, made, lost, cli, shown } = reloadBehind(30, (n) => Math.floor(n / 3));
    expect(lost).toBeGreaterThan(100);
    expect(cli).toHaveLength(made);
    // The log holds the run's rows to t again, byte for byte, then the restart's.
    expect(log.rows.slice(0, made).map(auditLineJson)).toEqual(cli);
    // The page's table gets the rows made again, then the restart's: the rows the log has past
    // the ones it held.
    expect(shown.map(auditLineJson)).toEqual(log.rows.slice(made - lost).map(auditLineJson));
  });

  it('writes nothing again when the log held every row', () => {
    const { log, made, cli, shown } = reloadBehind(30, () => 0);
    expect(log.rows.slice(0, made).map(auditLineJson)).toEqual(cli);
    expect(shown.map(auditLineJson)).toEqual(log.rows.slice(made).map(auditLineJson));
  });
});
