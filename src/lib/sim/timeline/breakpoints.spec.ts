import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { toMicros } from '../../machine/money';
import { effectiveBlock } from '../../machine/policy';
import type { AuditRecord } from '../../machine/types';
import { BreakpointWatcher, parseBreak, type BreakCondition } from './breakpoints';
import { Simulation } from '../engine/engine';
import { RunGuard } from '../checks/guard';
import { auditLineJson } from '../report/report';
import { parseScenario, type Scenario } from '../input/scenario';

function load(name: string): Scenario {
  const r = parseScenario(readFileSync(`static/scenarios/${name}.json`, 'utf8'));
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.scenario;
}

function conditions(...texts: string[]): BreakCondition[] {
  return texts.map((t) => {
    const r = parseBreak(t);
    if (!r.ok) throw new Error(r.error);
    return r.condition;
  });
}

function watched(scenario: Scenario, texts: string[], guard: RunGuard | null = null) {
  const audit: AuditRecord[] = [];
  const w = new BreakpointWatcher(conditions(...texts), guard);
  const base = { onAudit: (r: AuditRecord) => void audit.push(r) };
  const opts = w.options(guard ? guard.options(base) : base);
  const sim = w.attach(new Simulation(scenario, opts));
  guard?.attach(sim);
  return { sim, w, audit };
}

describe('breakpoint conditions', () => {
  it('parse the documented syntax', () => {
    expect(
      conditions('alert', 'consent@B', 'reason:user.denied', 'outcome:budget_exceeded@A')
    ).toMatchObject([
      { kind: 'alert', lane: null },
      { kind: 'consent', lane: 'B' },
      { kind: 'reason', reason: 'user.denied' },
      { kind: 'outcome', outcome: 'budget_exceeded', lane: 'A' }
    ]);
    expect(
      conditions('denial', 'denial:poller', 'spend>0.50@A', 'invariant:no-overdraw')
    ).toMatchObject([
      { kind: 'denial', server: null },
      { kind: 'denial', server: 'poller' },
      { kind: 'spend', micros: 500_000, lane: 'A' },
      { kind: 'invariant', id: 'no-overdraw' }
    ]);
  });

  it.each([
    ['alarm', 'unknown condition "alarm"'],
    ['alert@C', '"@C" is not a lane (A or B)'],
    ['reason:user.maybe', 'reason must be one of'],
    ['spend>lots', '"lots" is not an amount such as 0.50'],
    ['invariant:everything', 'invariant must be one of'],
    ['consent:now', '"consent" takes no argument']
  ])('refuse %s, saying why', (text, why) => {
    const r = parseBreak(text);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toContain(why);
    expect(!r.ok && r.error).toContain('conditions: alert | reason:CODE');
  });
});

describe('a run with breakpoints', () => {
  it('pauses at the first retry-loop alert with its facts; resuming changes nothing', () => {
    const scenario = load('retryable-loop');
    const plain: AuditRecord[] = [];
    new Simulation(scenario, { onAudit: (r) => void plain.push(r) }).runToEnd();
    const first = plain.find((r) => r.alert)!;
    expect(first).toBeDefined();

    const { sim, w, audit } = watched(scenario, ['alert']);
    sim.advanceTo(sim.end);
    const hit = w.hit!;
    expect(hit).not.toBeNull();
    expect(sim.done).toBe(false);
    expect(sim.now).toBe(first.t);
    expect(audit.at(-1)).toEqual(first);
    expect(hit).toMatchObject({
      condition: 'alert',
      lane: first.lane,
      t: first.t,
      identity: first.identity,
      outcome: first.outcome,
      request: { server: first.server, connection: first.connection, id: first.requestId }
    });
    expect(hit.audit!.alert).toBe(true);
    expect(hit.path[0]).toBe('identifying');
    expect(hit.path.at(-1)).toBe('sent');
    expect(hit.edges).toHaveLength(hit.path.length - 1);
    for (const e of hit.edges) expect(sim.lanes[hit.lane].metrics.edges[e]).toBeGreaterThan(0);
    expect(hit.request.params.messages.length).toBeGreaterThan(0);
    expect(hit.policyBlock).toEqual(
      effectiveBlock(sim.lanes[hit.lane].host.policy, hit.request.server)
    );

    w.resume();
    sim.runToEnd();
    expect(audit.map(auditLineJson)).toEqual(plain.map(auditLineJson));
  });

  it('consent pauses as the dialog opens, the request waiting on the user; resuming changes nothing', () => {
    const scenario = load('reconnect-bypass');
    const plain: AuditRecord[] = [];
    new Simulation(scenario, { onAudit: (r) => void plain.push(r) }).runToEnd();
    const { sim, w, audit } = watched(scenario, ['consent@B']);
    sim.advanceTo(sim.end);
    const hit = w.hit!;
    expect(hit).toMatchObject({ condition: 'consent@B', lane: 'B', phase: 'consent' });
    expect(hit.outcome).toBeNull();
    expect(hit.audit).toBeNull();
    expect(hit.frame).toBeNull();
    expect(hit.path.at(-1)).toBe('consenting');
    expect(hit.edges.at(-1)).toBe(`${hit.path.at(-2)}→consenting`);
    expect(hit.identity).not.toBe('');
    expect(hit.request.params.messages.length).toBeGreaterThan(0);
    expect(sim.now).toBe(hit.t);
    // Mid-flight: no record of it yet, and the machine holds it.
    const held = [...sim.lanes.B.inFlight.values()].map((f) => [
      f.request.connection,
      f.request.id
    ]);
    expect(held).toContainEqual([hit.request.connection, hit.request.id]);
    const mine = (r: AuditRecord) =>
      r.lane === 'B' && r.connection === hit.request.connection && r.requestId === hit.request.id;
    expect(audit.some(mine)).toBe(false);

    w.resume();
    sim.runToEnd();
    const record = audit.find(mine)!;
    expect(record.consentShown).toBe(true);
    expect(record.identity).toBe(hit.identity);
    expect(audit.map(auditLineJson)).toEqual(plain.map(auditLineJson));
  });

  it('shows the stored decision behind a denial: the one it wrote, then the one that answered', () => {
    const scenario = load('reconnect-bypass');
    const { sim, w } = watched(scenario, ['outcome:denied@B', 'reason:user.denied@B']);
    sim.advanceTo(sim.end);
    const fresh = w.hit!;
    expect(fresh.condition).toBe('outcome:denied@B');
    expect(fresh.audit!.replayed).toBe(false);
    expect(fresh.stored).toMatchObject({
      answered: false,
      verdict: 'denied',
      reason: 'user.denied',
      decidedAt: fresh.time,
      represented: 0
    });
    w.resume();
    sim.advanceTo(sim.end);
    const replay = w.hit!;
    expect(replay.condition).toBe('reason:user.denied@B');
    expect(replay.audit!.replayed).toBe(true);
    expect(replay.identity).toBe(fresh.identity);
    expect(replay.stored).toMatchObject({
      answered: true,
      verdict: 'denied',
      decidedAt: fresh.time
    });
    expect(replay.stored!.represented).toBeGreaterThanOrEqual(1);
    // user.denied is kept for the store's lifetime: no expiry, no TTL to count down.
    expect(replay.stored!.expiresAt).toBeNull();
    expect(replay.stored!.ttlLeftMs).toBeNull();
  });

  it('pauses when a lane’s spend crosses an amount, with the budget window at that instant', () => {
    const scenario = load('budget-window');
    const { sim, w } = watched(scenario, ['spend>0.05@A']);
    sim.advanceTo(sim.end);
    const hit = w.hit!;
    expect(hit.lane).toBe('A');
    const spent = toMicros(hit.laneSpend);
    expect(spent).toBeGreaterThan(50_000);
    expect(spent - toMicros(hit.audit!.cost)).toBeLessThanOrEqual(50_000);
    expect(hit.budgetWindow).not.toBeNull();
    const block =
      sim.lanes.A.host.policy.servers[hit.request.server] ?? sim.lanes.A.host.policy.defaults;
    expect(hit.budgetWindow!.amount).toBe(block.budget!.amount);
    expect(toMicros(hit.budgetWindow!.spent)).toBe(
      sim.lanes.A.host.spentMicros(hit.request.server)
    );
    expect(Date.parse(hit.budgetWindow!.resetsAt)).toBeGreaterThan(hit.t);
  });

  it('pauses at a server’s first denial, once per server', () => {
    const scenario = load('reconnect-bypass');
    const { sim, w } = watched(scenario, ['denial@A']);
    const servers: string[] = [];
    for (;;) {
      sim.advanceTo(sim.end);
      if (!w.hit) break;
      servers.push(w.hit.request.server);
      expect(w.hit.outcome).toBe('denied');
      w.resume();
    }
    expect(servers.sort()).toEqual(scenario.servers.map((s) => s.name).sort());
  });

  it('pauses when a guarantee breaks, naming it', () => {
    const scenario = load('reconnect-bypass');
    const guard = new RunGuard(scenario, { validate: () => 'a frame this test refuses' });
    const { sim, w } = watched(scenario, ['invariant:frames-conform'], guard);
    sim.advanceTo(sim.end);
    expect(w.hit!.invariant).toMatchObject({
      id: 'frames-conform',
      offender: { what: 'a frame this test refuses' }
    });
  });
});
