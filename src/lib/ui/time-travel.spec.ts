import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Policy } from '$lib/machine/policy';
import { Simulation } from '$lib/sim/engine/engine';
import type { Command, Reply, Snapshot } from '$lib/sim/session/protocol';
import { parseScenario } from '$lib/sim/input/scenario';
import { Session } from '$lib/sim/session/session';
import { TimeTravel, type TravelHost } from './time-travel.svelte';
import type { LaneId } from '$lib/machine/vocabulary';

const MIN = 60_000;
const read = (name: string) =>
  JSON.parse(readFileSync(`static/scenarios/${name}.json`, 'utf8')) as Record<string, unknown>;

/** The page's side played by a real session (what the worker runs), synchronously. */
class SessionHost implements TravelHost {
  snapshot: Snapshot | null = null;
  playing = false;
  rewinds = 0;
  sent: Command[] = [];
  readonly session = new Session();
  constructor(name: string, load: Partial<Extract<Command, { type: 'load' }>> = {}) {
    this.load(name, load);
  }
  /** Load (or Reset to) a scenario, as the page's Playground does. */
  load(name: string, load: Partial<Extract<Command, { type: 'load' }>> = {}): void {
    const [r] = this.session.handle({ type: 'load', scenario: read(name), ...load });
    if (r?.type !== 'loaded' || !r.ok) throw new Error('not loaded');
    this.snapshot = this.session.snapshot();
  }
  pause(): void {
    this.playing = false;
  }
  play(): void {
    this.playing = true;
  }
  rewound(): void {
    this.rewinds++;
  }
  async travelRequest(cmd: Command, last: (r: Reply) => boolean): Promise<Reply[]> {
    this.sent.push(cmd);
    const out: Reply[] = [];
    for (const r of this.session.handle(cmd)) {
      if (r.type === 'snapshot') this.snapshot = r;
      out.push(r);
      if (last(r)) break;
    }
    return out;
  }
  advance(ms: number): void {
    const s = this.snapshot!;
    this.snapshot = this.session.handle({ type: 'advance', to: s.now + ms })[0] as Snapshot;
  }
}

const settled = (tt: TimeTravel) => tt.pending;

function engineAt(name: string, t: number) {
  const p = parseScenario(read(name));
  if (!p.ok) throw new Error('bad scenario');
  const sim = new Simulation(p.scenario);
  sim.advanceTo(t);
  return sim;
}

describe('TimeTravel: the scrubber', () => {
  it('seeks back to t: the lanes show what the engine shows run straight to t', async () => {
    const host = new SessionHost('reconnect-bypass');
    const tt = new TimeTravel(host);
    host.playing = true;
    host.advance(40 * MIN);
    const t = host.snapshot!.start + 12 * MIN;
    await tt.seek(t);
    expect(host.playing).toBe(false);
    expect(host.rewinds).toBe(1);
    expect(tt.wentBack).toBe(true);
    expect(host.snapshot!.now).toBe(t);
    const sim = engineAt('reconnect-bypass', t);
    for (const lane of ['A', 'B'] as const)
      expect(host.snapshot!.lanes[lane].counters).toEqual(sim.lanes[lane].metrics.counters);
    expect(tt.lastSeekMs).toBeGreaterThan(0);
    expect(tt.valueText()).toBe('0:12:00 of 1:00:00');
  });

  it('steps a checkpoint with the arrows and goes to the ends with Home/End', async () => {
    const host = new SessionHost('reconnect-bypass');
    const tt = new TimeTravel(host);
    host.advance(10 * MIN);
    await tt.refreshStops();
    expect(tt.stops.length).toBeGreaterThan(2);
    const before = host.snapshot!.now;
    const prev = tt.neighbour(-1);
    expect(prev).toBeLessThan(before);
    expect(tt.stops).toContain(prev);
    expect(tt.key('ArrowLeft')).toBe(true);
    await settled(tt);
    expect(host.snapshot!.now).toBe(prev);
    await tt.seek(tt.neighbour(1));
    expect(host.snapshot!.now).toBeGreaterThan(prev);
    tt.key('Home');
    await settled(tt);
    expect(host.snapshot!.now).toBe(host.snapshot!.start);
    tt.key('End');
    await settled(tt);
    expect(host.snapshot!.now).toBe(host.snapshot!.end);
    expect(tt.key('x')).toBe(false);
  });
});

describe('TimeTravel: breakpoints', () => {
  it('names a bad condition without sending it, and pauses on the first alert', async () => {
    const host = new SessionHost('retryable-loop');
    const tt = new TimeTravel(host);
    expect(await tt.addBreak('alrt')).toBe(false);
    expect(tt.breakError).toContain('unknown condition "alrt"');
    expect(host.sent).toHaveLength(0);
    expect(await tt.addBreak('alert')).toBe(true);
    expect(tt.conditions).toEqual(['alert']);
    host.advance(host.snapshot!.end - host.snapshot!.now);
    const facts = tt.paused;
    expect(facts?.condition).toBe('alert');
    expect(host.snapshot!.now).toBeLessThan(host.snapshot!.end);
    await tt.resume();
    expect(tt.paused).toBeNull();
    expect(host.playing).toBe(true);
    expect(await tt.removeBreak('alert')).toBe(true);
    expect(tt.conditions).toEqual([]);
  });
});

describe('TimeTravel: fork', () => {
  it('forks lane A from t; lane B keeps the numbers of the unforked run', async () => {
    const host = new SessionHost('reconnect-bypass');
    const tt = new TimeTravel(host);
    host.advance(30 * MIN);
    const ok = await tt.startFork({
      version: 1,
      atMs: 10 * MIN,
      lane: 'A',
      change: { kind: 'config', client: { store: 'durable' } }
    });
    expect(ok).toBe(true);
    expect(tt.fork?.atMs).toBe(10 * MIN);
    expect(host.snapshot!.now).toBe(host.snapshot!.start + 10 * MIN);
    host.advance(20 * MIN);
    const sim = engineAt('reconnect-bypass', host.snapshot!.now);
    expect(host.snapshot!.lanes.B.counters).toEqual(sim.lanes.B.metrics.counters);
    expect(host.snapshot!.lanes.A.counters).not.toEqual(sim.lanes.A.metrics.counters);
  });

  it('forks with an edited policy from the editors (sampling off for lane B from now)', async () => {
    const host = new SessionHost('reconnect-bypass');
    const tt = new TimeTravel(host);
    host.advance(20 * MIN);
    const lanes = read('reconnect-bypass').lanes as Record<string, { policy: Policy }>;
    const policy = structuredClone(lanes.B!.policy);
    policy.defaults.sampling = false;
    tt.forkArmed = true;
    expect(await tt.forkHere('B', { kind: 'policy', policy })).toBe(true);
    expect(tt.forkArmed).toBe(false);
    expect(tt.fork).toMatchObject({ atMs: 20 * MIN, lane: 'B', change: { kind: 'policy' } });
    expect(host.snapshot!.marks.at(-1)).toMatchObject({ kind: 'fork', lane: 'B' });
    const calls = host.snapshot!.lanes.B.counters.providerCalls;
    host.advance(20 * MIN);
    expect(host.snapshot!.lanes.B.counters.providerCalls).toBe(calls);
    const sim = engineAt('reconnect-bypass', host.snapshot!.now);
    expect(host.snapshot!.lanes.A.counters).toEqual(sim.lanes.A.metrics.counters);
  });

  it('reports a fork past the end with its path', async () => {
    const host = new SessionHost('reconnect-bypass');
    const tt = new TimeTravel(host);
    const ok = await tt.startFork({
      version: 1,
      atMs: 5 * 3_600_000,
      lane: 'A',
      change: { kind: 'config', client: {} }
    });
    expect(ok).toBe(false);
    expect(tt.forkErrors[0]).toMatch(/^\$\.atMs: the scenario ends at 1 h/);
  });
});

describe('TimeTravel: a shared link with a fork', () => {
  it('applies the fork once, on the first load of the linked scenario only', async () => {
    const host = new SessionHost('reconnect-bypass');
    const tt = new TimeTravel(host);
    const data = read('reconnect-bypass');
    const fork = { version: 1, atMs: 5 * MIN, lane: 'B', change: { kind: 'config', client: {} } };
    tt.fromLink({ other: true }, fork);
    await tt.loaded(data);
    expect(tt.fork).toBeNull();
    tt.fromLink(data, fork);
    await tt.loaded(data);
    expect(tt.fork).toEqual(fork);
    expect(host.snapshot!.now).toBe(host.snapshot!.start + 5 * MIN);
    host.load('reconnect-bypass'); // Reset: the fork is not applied again
    await tt.loaded(data);
    expect(tt.fork).toBeNull();
  });

  it("names what is wrong with a link's fork", async () => {
    const host = new SessionHost('reconnect-bypass');
    const tt = new TimeTravel(host);
    const data = read('reconnect-bypass');
    tt.fromLink(data, { version: 1, atMs: -1, lane: 'C', change: { kind: 'config', client: {} } });
    await tt.loaded(data);
    expect(tt.fork).toBeNull();
    expect(tt.forkErrors.join('\n')).toContain("The link's fork: $.atMs");
    expect(tt.forkErrors.join('\n')).toContain('$.lane');
  });
});

describe('TimeTravel: the lane editors after a fork', () => {
  const base = read('reconnect-bypass').lanes as Record<
    LaneId,
    { client: Record<string, unknown>; policy: Policy }
  >;

  it('show the forked lane’s configuration and the other lane’s own; a live edit takes over', async () => {
    const host = new SessionHost('reconnect-bypass');
    const tt = new TimeTravel(host);
    host.advance(20 * MIN);
    const client = { ...base.A.client, store: 'durable' as const };
    expect(tt.laneClient('A', base.A.client)).toEqual(base.A.client);
    expect(await tt.forkHere('A', { kind: 'config', client, what: 'lane A made durable' })).toBe(
      true
    );
    expect(tt.laneClient('A', base.A.client)).toEqual(client);
    expect(host.snapshot!.lanes.A.scope).toBe('durable');
    expect(tt.laneClient('B', base.B.client)).toEqual(base.B.client);
    expect(tt.lanePolicy('A', base.A.policy)).toEqual(base.A.policy);
    // A live edit of lane A after the fork: the page's configuration is what it runs now.
    tt.edited('A');
    expect(tt.laneClient('A', base.A.client)).toEqual(base.A.client);
  });

  it('show the forked policy; back before the fork point, the base again', async () => {
    const host = new SessionHost('reconnect-bypass');
    const tt = new TimeTravel(host);
    host.advance(20 * MIN);
    const policy = structuredClone(base.B.policy);
    policy.defaults.sampling = false;
    expect(await tt.forkHere('B', { kind: 'policy', policy })).toBe(true);
    expect(tt.lanePolicy('B', base.B.policy)).toEqual(policy);
    expect(tt.lanePolicy('A', base.A.policy)).toEqual(base.A.policy);
    await tt.seek(host.snapshot!.start + 5 * MIN);
    expect(tt.fork).toBeNull();
    expect(tt.lanePolicy('B', base.B.policy)).toEqual(base.B.policy);
  });

  it('a reload of a forked run brings the fork back (the worker says so)', async () => {
    const first = new SessionHost('reconnect-bypass');
    const tt1 = new TimeTravel(first);
    first.advance(20 * MIN);
    const client = { ...base.A.client, store: 'durable' as const };
    await tt1.forkHere('A', { kind: 'config', client });
    first.advance(5 * MIN);
    const [tl] = first.session.handle({ type: 'timeline' });
    if (tl?.type !== 'timeline') throw new Error('no timeline');
    const reloaded = new SessionHost('reconnect-bypass', {
      at: { t: tl.t, actions: tl.actions, fork: tl.fork }
    });
    const tt = new TimeTravel(reloaded);
    await tt.loaded(read('reconnect-bypass'));
    expect(tt.fork).toEqual(tt1.fork);
    expect(tt.laneClient('A', base.A.client)).toEqual(client);
  });
});

describe('TimeTravel: a fork of a fork', () => {
  const base = read('reconnect-bypass').lanes as Record<
    LaneId,
    { client: Record<string, unknown>; policy: Policy }
  >;

  it('the editors show both forks; the link carries the chain; opening it re-creates the run', async () => {
    const host = new SessionHost('reconnect-bypass');
    const tt = new TimeTravel(host);
    host.advance(10 * MIN);
    const client = { ...base.A.client, store: 'durable' as const };
    expect(await tt.forkHere('A', { kind: 'config', client, what: 'A durable' })).toBe(true);
    host.advance(10 * MIN);
    const policy = structuredClone(base.B.policy);
    policy.defaults.sampling = false;
    expect(await tt.forkHere('B', { kind: 'policy', policy })).toBe(true);
    expect(tt.forks.map((f) => [f.atMs, f.lane])).toEqual([
      [10 * MIN, 'A'],
      [20 * MIN, 'B']
    ]);
    expect(tt.laneClient('A', base.A.client)).toEqual(client);
    expect(tt.lanePolicy('B', base.B.policy)).toEqual(policy);
    expect(tt.linkFork).toEqual(tt.forks);
    host.advance(10 * MIN);
    const want = host.snapshot!;

    // Opened from the link: the forks are applied in turn, and the run is the same run.
    const opened = new SessionHost('reconnect-bypass');
    const tt2 = new TimeTravel(opened);
    tt2.fromLink(read('reconnect-bypass'), JSON.parse(JSON.stringify(tt.linkFork)));
    await tt2.loaded(read('reconnect-bypass'));
    expect(tt2.forks).toEqual(tt.forks);
    opened.advance(want.now - opened.snapshot!.now);
    expect(opened.snapshot!.lanes.A.counters).toEqual(want.lanes.A.counters);
    expect(opened.snapshot!.lanes.B.counters).toEqual(want.lanes.B.counters);

    // Back between the two forks: on the first fork only.
    await tt.seek(host.snapshot!.start + 15 * MIN);
    expect(tt.forks.map((f) => f.lane)).toEqual(['A']);
    expect(tt.lanePolicy('B', base.B.policy)).toEqual(base.B.policy);
    expect(tt.linkFork).toEqual(tt.fork);
  });

  it("names which of a link's forks is wrong", async () => {
    const host = new SessionHost('reconnect-bypass');
    const tt = new TimeTravel(host);
    const good = { version: 1, atMs: 5 * MIN, lane: 'A', change: { kind: 'config', client: {} } };
    tt.fromLink(read('reconnect-bypass'), [good, { ...good, lane: 'C' }]);
    await tt.loaded(read('reconnect-bypass'));
    expect(tt.forks).toEqual([]);
    expect(tt.forkErrors.join('\n')).toContain("The link's fork 2: $.lane");
  });
});

describe('TimeTravel: breakpoints across Reset', () => {
  it('stay set, and fire again in the new run at the same request', async () => {
    const host = new SessionHost('retryable-loop');
    const tt = new TimeTravel(host);
    expect(await tt.addBreak('alert')).toBe(true);
    host.advance(host.snapshot!.end - host.snapshot!.now);
    const first = tt.paused!;
    expect(first.condition).toBe('alert');
    const sent = host.sent.length;
    host.load('retryable-loop'); // Reset
    await tt.loaded(read('retryable-loop'));
    expect(tt.conditions).toEqual(['alert']);
    expect(host.sent.slice(sent).some((c) => c.type === 'setBreakpoints')).toBe(false);
    expect(tt.paused).toBeNull();
    host.advance(host.snapshot!.end - host.snapshot!.now);
    expect(tt.paused).toMatchObject({ condition: 'alert', t: first.t, request: first.request });
  });
});
