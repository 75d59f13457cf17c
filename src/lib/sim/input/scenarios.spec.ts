/**
 * The ready-made scenarios (static/scenarios/*.json): each one a lesson with two lanes that differ
 * only in the client configuration or the policy. Every file parses and runs to the end; every
 * lesson is asserted numerically on the lanes' counters (and, where the lesson is about one
 * server, on its audit records); the RFC scenario is checked frame by frame against the RFC's
 * own numbers; every frame the runs emit conforms to the official MCP SDK schemas; and a run is
 * byte-for-byte reproducible.
 *
 * Each scenario is run once and the run is shared by the tests that read it, so the whole file
 * stays within a few seconds.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  CreateMessageResultSchema,
  JSONRPCErrorResponseSchema,
  JSONRPCResultResponseSchema
} from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { inputTokensOf } from '../../machine/budget';
import type {
  AuditRecord,
  BudgetDecision,
  ErrorFrame,
  Frame,
  ResultFrame,
  SamplingRequest
} from '../../machine/types';
import { sdkFrameProblem } from '../checks/conformance';
import type { FrameLine } from '../engine/engine';
import { guardedSimulation } from '../checks/guard';
import { brokenLine, type InvariantResult } from '../checks/invariants';
import { emptyCounters, type LaneCounters } from '../engine/metrics';
import { mergePatch } from './lessons';
import { LANE_IDS, parseScenario, type LaneId, type Scenario } from './scenario';
import type { UserStats } from '../actors/user';

const DIR = fileURLToPath(new URL('../../../../static/scenarios/', import.meta.url));
const FILES = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();
const NAMES = FILES.map((f) => f.slice(0, -'.json'.length));

/** The scenarios every lesson below is written against: all must exist. */
const LESSONS = [
  'silence-vs-denial',
  'retryable-loop',
  'transient-marked-permanent',
  'reconnect-bypass',
  'serialiser-variants',
  'prompt-mutator',
  'trimmed-context',
  'budget-window',
  'tired-user',
  'rfc-budget-caps',
  'prompt-cache-trap',
  'refusal-codes',
  'who-hears',
  'cheap-calls'
];

interface Lane {
  c: LaneCounters;
  user: UserStats;
  cacheHits: number;
}

interface Run {
  scenario: Scenario;
  frames: FrameLine[];
  audit: AuditRecord[];
  A: Lane;
  B: Lane;
  /** The run's guarantees, checked as it ran. */
  guarantees: InvariantResult[];
}

function load(name: string): Scenario {
  const r = parseScenario(readFileSync(`${DIR}${name}.json`, 'utf8'));
  if (!r.ok) throw new Error(`${name}: ${JSON.stringify(r.errors)}`);
  return r.scenario;
}

function execute(name: string): Run {
  const scenario = load(name);
  const frames: FrameLine[] = [];
  const audit: AuditRecord[] = [];
  const { sim, guard } = guardedSimulation(
    scenario,
    { onFrame: (l) => frames.push(l), onAudit: (a) => audit.push(a) },
    { validate: sdkFrameProblem }
  );
  sim.runToEnd();
  expect(sim.done).toBe(true);
  const lane = (id: LaneId): Lane => ({
    c: sim.lanes[id].metrics.counters,
    user: sim.lanes[id].userStats,
    cacheHits: sim.lanes[id].providerStats.cacheHits
  });
  return { scenario, frames, audit, A: lane('A'), B: lane('B'), guarantees: guard.results() };
}

const cache = new Map<string, Run>();
/** The scenario's one shared run. */
function run(name: string): Run {
  let r = cache.get(name);
  if (!r) {
    r = execute(name);
    cache.set(name, r);
  }
  return r;
}

// ───────────────────────────── reading a run ─────────────────────────────

/** A server name, or every server of a group (`indexer` matches `indexer-1`, `indexer-2`, …). */
function ofServer(name: string, server: string): boolean {
  return (
    name === server ||
    (name.startsWith(server + '-') && /^\d+$/.test(name.slice(server.length + 1)))
  );
}

function audits(r: Run, lane: LaneId, server?: string): AuditRecord[] {
  return r.audit.filter((a) => a.lane === lane && (!server || ofServer(a.server, server)));
}

function outFrames(r: Run, lane: LaneId, server?: string): FrameLine[] {
  return r.frames.filter(
    (l) => l.lane === lane && l.direction === 'out' && (!server || ofServer(l.server, server))
  );
}

function inFrames(r: Run, lane: LaneId, server?: string): SamplingRequest[] {
  return r.frames
    .filter(
      (l) => l.lane === lane && l.direction === 'in' && (!server || ofServer(l.server, server))
    )
    .map((l) => l.frame as SamplingRequest);
}

const isResult = (f: Frame | SamplingRequest): f is ResultFrame => 'result' in f;
const isError = (f: Frame | SamplingRequest): f is ErrorFrame => 'error' in f;

function result(l: FrameLine): ResultFrame['result'] {
  if (!isResult(l.frame))
    throw new Error(`expected a result frame, got ${JSON.stringify(l.frame)}`);
  return l.frame.result;
}

function error(l: FrameLine): ErrorFrame['error'] {
  if (!isError(l.frame)) throw new Error(`expected an error frame, got ${JSON.stringify(l.frame)}`);
  return l.frame.error;
}

function denialData(l: FrameLine): Record<string, unknown> {
  return error(l).data as Record<string, unknown>;
}

/** Per-server totals from the audit log: what the lane counters say, for one server. */
function tally(records: AuditRecord[]) {
  const micros = (a: AuditRecord) => Math.round(Number(a.cost) * 1_000_000);
  return {
    requests: records.length,
    fresh: records.filter((a) => !a.replayed).length,
    replays: records.filter((a) => a.replayed).length,
    prompts: records.filter((a) => a.consentShown).length,
    calls: records.filter((a) => a.tokensIn > 0).length,
    spendMicros: records.reduce((s, a) => s + micros(a), 0),
    identities: new Set(records.map((a) => a.identity)).size
  };
}

/**
 * One per task: `x` equals the lane's task count, short by at most one task per server that was
 * still waiting on its answer (a consent dialog, say) when the run ended.
 */
function onePerTask(x: number, r: Run, lane: LaneId): void {
  const tasks = r[lane].c.tasks;
  expect(x).toBeLessThanOrEqual(tasks);
  expect(x).toBeGreaterThanOrEqual(tasks - r.scenario.servers.length);
}

/** Requests the lane has answered (a frame, or a deliberate silence); the rest are in flight. */
function decided(c: LaneCounters): number {
  return Object.values(c.frames).reduce((a, b) => a + b, 0) + c.silenced;
}

// ───────────────────────────── every file ─────────────────────────────

describe('the scenario files', () => {
  it('include every lesson', () => {
    for (const name of LESSONS) expect(NAMES).toContain(name);
  });

  it.each(NAMES)('%s parses, teaches, and runs to the end', (name) => {
    const scenario = load(name);
    const data = scenario.data;
    expect(data.name).toBe(name);
    expect(data.title.length).toBeGreaterThan(0);
    expect(data.summary?.length ?? 0).toBeGreaterThan(0);
    expect(data.lesson).toBeDefined();
    const lesson = data.lesson!;
    for (const text of [lesson.title, lesson.predict, lesson.explain])
      expect(text.length).toBeGreaterThan(0);
    // What to watch names counters the playground shows.
    const counters = Object.keys(emptyCounters());
    expect(lesson.watch?.length ?? 0).toBeGreaterThan(0);
    for (const w of lesson.watch ?? []) expect(counters).toContain(w);
    // Two lanes, and they differ: in the client configuration, the policy, or the direct route.
    const { A, B } = data.lanes;
    expect(JSON.stringify([A.client, A.policy, A.direct])).not.toBe(
      JSON.stringify([B.client, B.policy, B.direct])
    );

    const r = run(name);
    // A direct lane's servers call the provider themselves: the client receives nothing.
    for (const id of ['A', 'B'] as const)
      if (data.lanes[id].direct) expect(r[id].c.requests).toBe(0);
      else expect(r[id].c.requests).toBeGreaterThan(0);
    // Every request got exactly one frame, or a silence the lane's configuration asked for.
    for (const id of ['A', 'B'] as const) {
      const c = r[id].c;
      const inFlight = c.requests - decided(c);
      expect(inFlight).toBeGreaterThanOrEqual(0);
      expect(inFlight).toBeLessThanOrEqual(scenario.servers.length * 2);
      if (!data.lanes[id].client.silence) expect(c.silenced).toBe(0);
    }
  });
});

// ───────────────────────────── the guarantees ─────────────────────────────

describe('every scenario keeps the guarantees', () => {
  it.each(NAMES)('%s', (name) => {
    const { guarantees, scenario } = run(name);
    // Each one was checked; none is broken (the broken one's first offender names the request).
    // A lane refusing in a real client's style gives up the typed refusal: listed, as waived.
    const foreign = LANE_IDS.some(
      (id) => (scenario.lanes[id].client.denialStyle ?? 'lab') !== 'lab'
    );
    expect(guarantees.map((g) => g.id)).toEqual([
      'one-frame',
      'one-consent',
      'no-overdraw',
      'call-within-limit',
      'tokens-paid',
      'loops-flagged',
      'replays-no-model',
      'verdicts-only',
      'denials-true',
      'frames-conform',
      ...(foreign ? ['refusals-typed'] : []),
      'totals-match'
    ]);
    expect(brokenLine(guarantees)).toBeNull();
    // Silence and a foreign refusal style are the guarantees a learner may give up, and only by
    // switching them on.
    const silent = LANE_IDS.some((id) => scenario.lanes[id].client.silence);
    expect(guarantees[0]!.status).toBe(silent ? 'waived' : 'held');
    if (foreign) expect(guarantees.at(-2)!.status).toBe('waived');
  });
});

// ───────────────────────────── the lessons ─────────────────────────────

describe('silence-vs-denial', () => {
  it('silence makes servers retry; a denial frame makes them degrade at once', () => {
    const r = run('silence-vs-denial');
    const { A, B } = { A: r.A.c, B: r.B.c };
    // The same verdict in both lanes: sampling is off.
    expect(A.denials['policy.sampling_disabled']).toBe(A.requests);
    expect(B.denials['policy.sampling_disabled']).toBe(B.requests);
    expect(A.tasks).toBe(B.tasks);
    // A: one request per task, a frame for each, no timeouts, every task abandoned at once.
    expect(A.requests).toBe(A.tasks);
    expect(A.frames.denied).toBe(A.requests);
    expect(A.timeouts).toBe(0);
    expect(A.retries).toBe(0);
    expect(A.abandoned).toBe(A.tasks);
    // B: nothing is sent, every request times out, and the servers ask again and again.
    expect(B.silenced).toBe(B.requests);
    expect(B.frames.denied).toBe(0);
    expect(B.requests).toBeGreaterThanOrEqual(10 * A.requests);
    expect(B.timeouts).toBeGreaterThanOrEqual(10 * B.tasks);
    expect(B.retries).toBeGreaterThanOrEqual(10 * A.tasks);
    // The store replays the stored denial: one fresh evaluation per task in both lanes.
    expect(B.fresh).toBe(A.fresh);
    expect(B.replays).toBe(B.requests - B.fresh);
    // Every denial frame lane A sent says permanent.
    for (const l of outFrames(r, 'A')) expect(denialData(l).retryable).toBe(false);
    // Lane A's indexers ask once per task; lane B's keep asking the same question for minutes:
    // 30 retries, each after a 10-second timeout.
    const longestAsking = (lane: LaneId) => {
      const first = new Map<string, number>();
      let longest = 0;
      for (const x of audits(r, lane, 'indexer')) {
        if (!first.has(x.identity)) first.set(x.identity, x.t);
        longest = Math.max(longest, x.t - first.get(x.identity)!);
      }
      return longest;
    };
    expect(longestAsking('A')).toBe(0);
    expect(longestAsking('B')).toBeGreaterThanOrEqual(30 * 10_000);
  });
});

describe('retryable-loop', () => {
  it('a permanent refusal marked retryable loops until the retry budget runs out', () => {
    const r = run('retryable-loop');
    const { A, B } = { A: r.A.c, B: r.B.c };
    const budget = 20; // each server's maxRetries
    const servers = r.scenario.servers.length;
    expect(A.tasks).toBe(B.tasks);
    // A: one request per task, abandoned at once.
    expect(A.requests).toBe(A.tasks);
    expect(A.retries).toBe(0);
    expect(A.abandoned).toBe(A.tasks);
    for (const l of outFrames(r, 'A')) expect(denialData(l).retryable).toBe(false);
    // B: the same refusal, marked retryable: the servers come back until their budget is spent.
    for (const l of outFrames(r, 'B')) {
      expect(denialData(l).reason).toBe('policy.sampling_disabled');
      expect(denialData(l).retryable).toBe(true);
    }
    expect(B.requests).toBeGreaterThanOrEqual(10 * A.requests);
    expect(B.retries).toBeLessThanOrEqual(budget * B.tasks);
    // Only a task still looping when the run ends (at most one per server) is short of it.
    expect(B.retries).toBeGreaterThanOrEqual(budget * (B.tasks - servers));
    // The store replays it, and its represented counter trips the retry-loop alert.
    expect(B.replays).toBeGreaterThanOrEqual(B.retries);
    expect(B.alerts).toBeGreaterThan(0);
    expect(A.alerts).toBe(0);
    // Nothing was ever allowed: the loop bought nothing.
    expect(A.providerCalls + B.providerCalls).toBe(0);
  });
});

describe('transient-marked-permanent', () => {
  it('a throttle marked permanent makes servers abandon work they would have been allowed', () => {
    const r = run('transient-marked-permanent');
    const { A, B } = { A: r.A.c, B: r.B.c };
    expect(A.tasks).toBe(B.tasks);
    // The same first refusals in both lanes.
    const throttled = B.denials['policy.rate_limit'] ?? 0;
    expect(throttled).toBeGreaterThan(0);
    expect(A.denials['policy.rate_limit']).toBe(throttled);
    // A: each throttled task waits retryAfterMs, asks once more and is served.
    expect(A.retries).toBe(throttled);
    expect(A.completed).toBeGreaterThanOrEqual(Math.floor(0.95 * A.tasks));
    for (const l of outFrames(r, 'A').filter((l) => isError(l.frame))) {
      expect(denialData(l)).toMatchObject({ reason: 'policy.rate_limit', retryable: true });
      expect(denialData(l).retryAfterMs).toBeGreaterThan(0);
    }
    // B: the same throttle said "permanent": every throttled task is abandoned.
    expect(B.retries).toBe(0);
    expect(B.abandoned).toBe(throttled);
    expect(B.abandoned).toBeGreaterThanOrEqual(10 * Math.max(1, A.abandoned));
    expect(A.completed).toBeGreaterThanOrEqual(1.5 * B.completed);
  });
});

describe('reconnect-bypass', () => {
  it('a connection-scoped store hands a reconnecting server a fresh prompt every time', () => {
    const r = run('reconnect-bypass');
    const { A, B } = { A: r.A.c, B: r.B.c };
    expect(A.reconnects).toBeGreaterThan(0);
    expect(A.consentPrompts).toBeGreaterThanOrEqual(10 * B.consentPrompts);
    // B: one prompt per task; every reconnect after it is a replay.
    onePerTask(B.consentPrompts, r, 'B');
    onePerTask(B.fresh, r, 'B');
    expect(B.replays).toBeGreaterThanOrEqual(10 * B.fresh);
    expect(B.alerts).toBeGreaterThan(0);
    // A: nothing survives a reconnect.
    expect(A.replays).toBe(0);
    expect(A.fresh).toBe(decided(A));
    // And the fresh chances at the user are what get the calls paid for.
    expect(A.providerCalls).toBeGreaterThan(B.providerCalls);
    expect(A.spendMicros).toBeGreaterThan(B.spendMicros);
  });
});

describe('refusal-codes', () => {
  it("a refusal sent as VS Code's -32000 reads as a dropped connection: reconnects, re-asks, spend", () => {
    const r = run('refusal-codes');
    const { A, B } = { A: r.A.c, B: r.B.c };
    expect(A.tasks).toBe(B.tasks);
    // A: the typed denial; a well-behaved server degrades at once, one prompt per task.
    expect(A.consentPrompts).toBe(A.tasks);
    expect(A.reconnects).toBe(0);
    for (const f of outFrames(r, 'A').map((l) => l.frame))
      if (isError(f)) expect(f.error.code).toBe(-32003);
    // B: exactly VS Code's frame, no data; every refusal makes its server reconnect.
    const refusals = outFrames(r, 'B')
      .map((l) => l.frame)
      .filter(isError);
    expect(refusals.length).toBe(B.reconnects);
    for (const f of refusals)
      expect(f.error).toEqual({
        code: -32000,
        message: 'The user has denied permission to call this method.'
      });
    // Each reconnect empties the connection-scoped store: the user is asked again, and gives in.
    expect(B.consentPrompts).toBeGreaterThan(2 * A.consentPrompts);
    expect(B.completed).toBeGreaterThan(A.completed);
    expect(B.spendMicros).toBeGreaterThan(A.spendMicros);
    const typed = r.guarantees.find((g) => g.id === 'refusals-typed');
    expect(typed).toMatchObject({ status: 'waived', checked: refusals.length });
  });
});

describe('cheap-calls', () => {
  const micros = (m: { amount: string }) => Math.round(Number(m.amount) * 1_000_000);
  const skipped = (r: Run, lane: LaneId, server?: string) =>
    audits(r, lane, server).filter((a) => a.consentSkipped);

  it('askAbove saves the dialogs and spends unasked; every skip is recorded with its basis', () => {
    const r = run('cheap-calls');
    const { A, B } = { A: r.A.c, B: r.B.c };
    expect(A.tasks).toBe(B.tasks);
    // A asks for every call; B only for the report's calls, whose estimates are above $0.005.
    expect(A.consentSkipped).toBe(0);
    expect(A.unaskedSpendMicros).toBe(0);
    expect(A.consentPrompts).toBe(decided(A));
    expect(tally(audits(r, 'B', 'report')).prompts).toBe(B.consentPrompts);
    expect(B.consentPrompts + B.consentSkipped).toBe(decided(B));
    expect(B.consentPrompts).toBeLessThan(A.consentPrompts / 10);
    // Every skipped dialog's record keeps its basis: an estimate at or below the threshold, in
    // the card's currency, the same estimate its budget decision states — and no dialog.
    const records = skipped(r, 'B');
    expect(records).toHaveLength(B.consentSkipped);
    for (const a of records) {
      expect(a).toMatchObject({ consentShown: false, consent: 'not-asked', replayed: false });
      expect(a.consentSkipped!.askAbove).toEqual({ amount: '0.005', currency: 'USD' });
      expect(a.consentSkipped!.estimatedCost).toEqual(a.budgetDecision!.estimatedCost);
      expect(micros(a.consentSkipped!.estimatedCost)).toBeLessThanOrEqual(5_000);
    }
    // The counter is the records' cost: spend no person saw a dialog for.
    expect(B.unaskedSpendMicros).toBe(tally(records).spendMicros);
    // The trap: one large job cut into calls under the threshold, all served unasked, and
    // together most of what lane B spent — more than lane A spent on everything.
    const contracts = tally(skipped(r, 'B', 'contracts'));
    expect(contracts.requests).toBe(tally(audits(r, 'B', 'contracts')).requests);
    expect(contracts.spendMicros).toBeGreaterThan(B.spendMicros / 2);
    expect(B.unaskedSpendMicros).toBeGreaterThan(A.spendMicros);
    expect(B.spendMicros).toBeGreaterThan(A.spendMicros);
  });

  it('its Try, a budget window in lane B, bounds the spend no person saw', () => {
    const lesson = JSON.parse(
      readFileSync(
        fileURLToPath(new URL('../../../../static/lessons/cheap-calls.json', import.meta.url)),
        'utf8'
      )
    ) as { try: { patch: Record<string, unknown> } };
    const base = JSON.parse(readFileSync(`${DIR}cheap-calls.json`, 'utf8')) as unknown;
    const parsed = parseScenario(mergePatch(base, lesson.try.patch));
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
    const { sim } = guardedSimulation(parsed.scenario, {}, { validate: sdkFrameProblem });
    sim.runToEnd();
    const before = run('cheap-calls').B.c;
    const B = sim.lanes.B.metrics.counters;
    const window = parsed.scenario.lanes.B.policy.defaults.budget!;
    expect(window).toMatchObject({ amount: '0.10', windowMs: 3_600_000 });
    // Still dialogs saved, but never more unasked than each server's window allows (one
    // window spans the hour: 09:00–10:00).
    expect(B.consentSkipped).toBeGreaterThan(0);
    expect(B.consentPrompts).toBe(before.consentPrompts);
    expect(B.unaskedSpendMicros).toBeLessThanOrEqual(
      micros(window) * parsed.scenario.servers.length
    );
    expect(B.unaskedSpendMicros).toBeLessThan(before.unaskedSpendMicros / 2);
  });
});

describe('who-hears', () => {
  it('2026-07-28: a refusal fails the host’s tool call; servers never hear it, the host retries', () => {
    const r = run('who-hears');
    const { A, B } = { A: r.A.c, B: r.B.c };
    expect(A.tasks).toBe(B.tasks);
    // A (2025-11-25): servers hear their refusals and the retriers among them ask again.
    expect(A.hostRetries).toBe(0);
    expect(A.retries).toBeGreaterThan(0);
    // B (2026-07-28): no server retry at all; every re-presentation is the host calling again,
    // at most hostRetries (2) times a task.
    expect(B.retries).toBe(0);
    expect(B.hostRetries).toBeGreaterThan(0);
    expect(B.hostRetries).toBeLessThanOrEqual(2 * B.tasks);
    expect(B.requests).toBe(B.tasks + B.hostRetries);
    expect(A.requests).toBeGreaterThan(B.requests);
    // The user's verdicts are the same: one prompt per task in both lanes (durable stores).
    expect(B.consentPrompts).toBe(A.consentPrompts);
  });
});

describe('serialiser-variants', () => {
  it('without canonicalisation every serialiser looks like a new request', () => {
    const r = run('serialiser-variants');
    const { A, B } = { A: r.A.c, B: r.B.c };
    const a = tally(audits(r, 'A'));
    const b = tally(audits(r, 'B'));
    expect(A.tasks).toBe(B.tasks);
    // B: one identity, one fresh evaluation and one prompt per task; every retry replayed.
    onePerTask(b.identities, r, 'B');
    onePerTask(B.fresh, r, 'B');
    expect(B.consentPrompts).toBe(B.fresh);
    expect(B.replays).toBe(decided(B) - B.fresh);
    // A: up to four identities per task (one per serialiser), each evaluated and prompted afresh.
    expect(a.identities).toBeGreaterThanOrEqual(3 * A.tasks);
    expect(a.identities).toBeLessThanOrEqual(4 * A.tasks);
    expect(A.fresh).toBeGreaterThanOrEqual(3 * B.fresh);
    expect(A.consentPrompts).toBeGreaterThanOrEqual(3 * B.consentPrompts);
    expect(B.replays).toBeGreaterThan(A.replays);
    // The retries really are different bytes for one request: four presentations of one task
    // differ as JSON text, yet a canonicalising identity gives them one digest.
    const records = audits(r, 'B', 'résumé-writer-1');
    const byIdentity = new Map<string, AuditRecord[]>();
    for (const x of records) byIdentity.set(x.identity, [...(byIdentity.get(x.identity) ?? []), x]);
    const task = [...byIdentity.values()].find((g) => g.length >= 4)!;
    expect(task).toBeDefined();
    const sent = task.slice(0, 4).map((x) => {
      const line = r.frames.find(
        (l) =>
          l.lane === 'B' &&
          l.direction === 'in' &&
          l.connection === x.connection &&
          l.frame.id === x.requestId
      )!;
      return JSON.stringify((line.frame as SamplingRequest).params);
    });
    expect(new Set(sent).size).toBe(4);
  });
});

describe('prompt-mutator', () => {
  it('identity catches nothing that is trying; the rate limit and budget window bound it', () => {
    const r = run('prompt-mutator');
    const a = tally(audits(r, 'A', 'mutator'));
    const b = tally(audits(r, 'B', 'mutator'));
    // Every mutation is a new request: never a replay, in either lane.
    for (const t of [a, b]) {
      expect(t.replays).toBe(0);
      expect(t.identities).toBe(t.requests);
    }
    // A: nothing counts the attempts: prompts, calls and spend grow with its persistence.
    expect(a.prompts).toBeGreaterThanOrEqual(3 * b.prompts);
    expect(a.calls).toBeGreaterThanOrEqual(5 * Math.max(1, b.calls));
    expect(a.spendMicros).toBeGreaterThanOrEqual(5 * b.spendMicros);
    // B: at most 5 fresh evaluations reach the user per 10-minute window, and the day's spend is
    // bounded by the $0.03 window (plus, at most, a call already running when it ran out: the
    // window is charged when a call completes), whatever the mutator does.
    const windows = Math.ceil(r.scenario.durationMs / 600_000);
    expect(b.prompts).toBeLessThanOrEqual(5 * windows);
    const oneCall = 15_100; // the mutator's pre-flight estimate: ~20 input + 1,000 output tokens
    expect(b.spendMicros).toBeLessThanOrEqual(30_000 + oneCall);
    expect(r.B.c.denials['policy.rate_limit'] ?? 0).toBeGreaterThan(0);
    expect(r.A.c.denials['policy.rate_limit']).toBeUndefined();
    expect(r.A.c.spendMicros).toBeGreaterThanOrEqual(3 * r.B.c.spendMicros);
  });

  it('the honest retrier is replayed for free in both lanes', () => {
    const r = run('prompt-mutator');
    for (const lane of ['A', 'B'] as const) {
      const records = audits(r, lane, 'honest-retrier');
      const t = tally(records);
      // One fresh evaluation and one prompt per request it makes; every retry of it a replay.
      expect(t.fresh).toBe(t.identities);
      expect(t.prompts).toBeLessThanOrEqual(t.fresh);
      expect(t.replays).toBeGreaterThan(0);
      const seen = new Set<string>();
      for (const x of records) {
        expect(x.replayed).toBe(seen.has(x.identity));
        seen.add(x.identity);
      }
      for (const x of records.filter((x) => x.replayed)) {
        expect(x.consentShown).toBe(false);
        expect(x.tokensIn).toBe(0);
        expect(Number(x.cost)).toBe(0);
      }
    }
  });
});

describe('trimmed-context', () => {
  it('an annotated trim is known to the server; a silent one becomes a confident answer', () => {
    const r = run('trimmed-context');
    const { A, B } = { A: r.A.c, B: r.B.c };
    // The same work, the same cost, the same trims.
    expect(A.trimmed).toBeGreaterThan(0);
    expect(B.trimmed).toBe(A.trimmed);
    expect(B.spendMicros).toBe(A.spendMicros);
    // A: every trimmed answer is reported as made without the context asked for.
    expect(A.degradedAware).toBe(A.trimmed);
    expect(A.trimmedSilently).toBe(0);
    // B: none is; every one is presented as a summary of what the model never saw.
    expect(B.trimmedSilently).toBe(B.trimmed);
    expect(B.degradedAware).toBe(0);
    const trimmedA = outFrames(r, 'A', 'summariser');
    expect(trimmedA.length).toBe(A.trimmed);
    for (const l of trimmedA)
      expect(result(l)._meta).toEqual({
        context: { requested: 'allServers', applied: 'thisServer', reason: 'policy.max_scope' }
      });
    for (const l of outFrames(r, 'B')) expect(result(l)._meta).toBeUndefined();
    // The well-behaved server asking for thisServer is not trimmed in either lane.
    for (const lane of ['A', 'B'] as const)
      for (const x of audits(r, lane, 'notes')) expect(x.outcome).toBe('allowed');
  });
});

describe('budget-window', () => {
  const resetAt = Date.parse('2026-03-10T09:30:00Z');

  it('the denial carries resetsAt, and the store absorbs the hammering', () => {
    const r = run('budget-window');
    for (const lane of ['A', 'B'] as const) {
      const denials = outFrames(r, lane).filter((l) => isError(l.frame));
      expect(denials.length).toBeGreaterThan(0);
      for (const l of denials) {
        expect(error(l).code).toBe(-32003);
        expect(denialData(l)).toMatchObject({
          reason: 'policy.budget_exhausted',
          retryable: false
        });
        expect(denialData(l).resetsAt).toMatch(/^2026-03-10T(09:30|10:00):00Z$/);
      }
      // Re-presentations are replayed from the stored denial: no evaluation, no spend.
      const records = audits(r, lane).filter((x) => x.reason === 'policy.budget_exhausted');
      const replayed = records.filter((x) => x.replayed);
      expect(replayed.length).toBeGreaterThanOrEqual(3 * (records.length - replayed.length));
      for (const x of replayed) expect(Number(x.cost)).toBe(0);
    }
  });

  it('a denial stored until resetsAt lets the work resume; one stored for the session does not', () => {
    const r = run('budget-window');
    const { A, B } = { A: r.A.c, B: r.B.c };
    // A never sends a denial whose window has already reset.
    const stale = (lane: LaneId) =>
      outFrames(r, lane).filter(
        (l) => isError(l.frame) && Date.parse(String(denialData(l).resetsAt)) <= l.t
      ).length;
    expect(stale('A')).toBe(0);
    expect(stale('B')).toBeGreaterThanOrEqual(10); // was 20 before the window stopped being overdrawn
    // After the reset, the digest (the same request each time) is served again in A only.
    const servedAfterReset = (lane: LaneId, server: string) =>
      audits(r, lane, server).filter((x) => x.t >= resetAt && x.tokensIn > 0).length;
    expect(servedAfterReset('A', 'digest')).toBeGreaterThan(0);
    expect(servedAfterReset('B', 'digest')).toBe(0);
    expect(A.completed).toBeGreaterThan(B.completed);
    // The naive fetcher is served again right after the reset in A; in B it first hits the
    // stale denial. (The tight loop no longer shows this: with the window never overdrawn, both
    // lanes' pollers finish their tasks with truncated answers before the window runs out.)
    const firstAfterReset = (lane: LaneId) =>
      audits(r, lane, 'fetcher').find((x) => x.t >= resetAt);
    expect(firstAfterReset('A')?.outcome).toBe('allowed');
    expect(firstAfterReset('B')).toMatchObject({
      reason: 'policy.budget_exhausted',
      replayed: true
    });
    // And no window is ever overdrawn: spend per server per window stays within $0.03.
    for (const lane of ['A', 'B'] as const) {
      const perWindow = new Map<string, number>();
      for (const x of audits(r, lane)) {
        const k = `${x.server}@${Math.floor(x.t / 1_800_000)}`;
        perWindow.set(k, (perWindow.get(k) ?? 0) + Math.round(Number(x.cost) * 1e6));
      }
      for (const micros of perWindow.values()) expect(micros).toBeLessThanOrEqual(30_000);
    }
    expect(B.replays).toBeGreaterThan(A.replays);
  });
});

describe('tired-user', () => {
  it('many prompts wear the user down; a durable store keeps the prompts few', () => {
    const r = run('tired-user');
    const { A, B } = { A: r.A.c, B: r.B.c };
    const [ua, ub] = [r.A.user, r.B.user];
    expect(A.consentPrompts).toBeGreaterThanOrEqual(2.5 * B.consentPrompts);
    onePerTask(B.consentPrompts, r, 'B');
    // The more prompts, the likelier a yes: A's user approves far more, and at a higher rate.
    expect(ua.approved).toBeGreaterThanOrEqual(3 * Math.max(1, ub.approved));
    expect(ua.approved / ua.prompts).toBeGreaterThan(ub.approved / ub.prompts);
    // And the yeses were paid for.
    expect(A.spendMicros).toBeGreaterThan(0);
    expect(A.spendMicros).toBeGreaterThanOrEqual(3 * B.spendMicros);
    expect(A.providerCalls).toBeGreaterThanOrEqual(3 * Math.max(1, B.providerCalls));
  });
});

describe('rfc-budget-caps', () => {
  const BASIS = 'example-model-v2@2026-07-01:in=3.00/Mtok,out=15.00/Mtok';

  function only(r: Run, lane: LaneId, server: string): FrameLine[] {
    const frames = outFrames(r, lane, server);
    expect(frames.length).toBeGreaterThan(0);
    return frames;
  }

  function decisionOf(l: FrameLine): BudgetDecision {
    const f = l.frame as ResultFrame | ErrorFrame;
    const budget = isResult(f)
      ? f.result.budget
      : (f.error.data as { budget?: { decision: BudgetDecision } }).budget;
    expect(budget).toBeDefined();
    return budget!.decision;
  }

  it('(a) under budget: endTurn, with the decision attached and the intent honoured', () => {
    const r = run('rfc-budget-caps');
    const [l] = only(r, 'A', 'under-budget');
    const res = result(l!);
    expect(res.stopReason).toBe('endTurn');
    expect(res.budget?.decision.requestHonored).toBe(true);
    expect(res.budget?.decision.limitApplied).toEqual({ amount: '0.0500', currency: 'USD' });
    expect(res.budget?.decision.meterBasis).toBe(BASIS);
  });

  it('(b) refused pre-flight: budget_exceeded, empty content, $0.10272 against $0.0500', () => {
    const r = run('rfc-budget-caps');
    const [request] = inFrames(r, 'A', 'preflight');
    expect(inputTokensOf(request!.params)).toBe(24_000);
    expect(request!.params.maxTokens).toBe(2048);
    expect(request!.params.budget?.onExceeded).toBe('reject');
    const frames = only(r, 'A', 'preflight');
    expect(frames).toHaveLength(1);
    const res = result(frames[0]!);
    expect(res.stopReason).toBe('budget_exceeded');
    expect(res.content).toEqual({ type: 'text', text: '' });
    expect(res.model).toBe('example-model-v2');
    const d = res.budget!.decision;
    expect(d.estimatedCost).toEqual({ amount: '0.10272', currency: 'USD' });
    expect(d.limitApplied).toEqual({ amount: '0.0500', currency: 'USD' });
    expect(d.limitSource).toBe('host_policy');
    expect(d.meterBasis).toBe(BASIS);
    expect(d.estimatedTokens).toEqual({ input: 24_000, output: 2048 });
    expect(d.requestHonored).toBe(false);
    expect(d.actualCost).toBeUndefined();
    // Nothing was spent.
    const [x] = audits(r, 'A', 'preflight');
    expect(x!.outcome).toBe('budget_exceeded');
    expect(x!.tokensIn).toBe(0);
    expect(x!.cost).toBe('0.0000');
  });

  it('(c) stopped mid-generation: budget_exhausted with "The cap ", $0.0090 of $0.0140', () => {
    const r = run('rfc-budget-caps');
    const [request] = inFrames(r, 'A', 'truncated');
    expect(inputTokensOf(request!.params)).toBe(1000);
    const frames = only(r, 'A', 'truncated');
    expect(frames).toHaveLength(1);
    const res = result(frames[0]!);
    expect(res.stopReason).toBe('budget_exhausted');
    expect(res.content).toEqual({ type: 'text', text: 'The cap ' });
    const d = res.budget!.decision;
    expect(d.actualCost).toEqual({ amount: '0.0090', currency: 'USD' });
    expect(d.limitApplied).toEqual({ amount: '0.0140', currency: 'USD' });
    expect(d.actualTokens).toEqual({ input: 1000, output: 400 });
    expect(d.meterBasis).toBe(BASIS);
    const [x] = audits(r, 'A', 'truncated');
    expect(x!.cost).toBe('0.0090');
  });

  it('(d) a transport failure: -32001, no budget decision, no policy reason', () => {
    const r = run('rfc-budget-caps');
    const frames = only(r, 'A', 'transport');
    const first = frames[0]!;
    expect(error(first).code).toBe(-32001);
    expect(JSON.stringify(first.frame)).not.toContain('budget');
    const [x] = audits(r, 'A', 'transport');
    expect(x!.outcome).toBe('transport_error');
    expect(x!.budgetDecision).toBeNull();
    expect(x!.reason).toBeNull();
    // Retrying a transport failure is reasonable: the well-behaved server's one retry is served.
    expect(frames).toHaveLength(2);
    expect(result(frames[1]!).stopReason).toBe('endTurn');
  });

  it('(e) the naive shrink (~48 %) is refused again; the exact one (≤ 6,426 tokens) is served', () => {
    const r = run('rfc-budget-caps');
    const naive = only(r, 'A', 'shrink-naive');
    expect(naive).toHaveLength(2);
    expect(decisionOf(naive[0]!).estimatedTokens).toEqual({ input: 24_000, output: 2048 });
    expect(result(naive[1]!).stopReason).toBe('budget_exceeded');
    expect(decisionOf(naive[1]!).estimatedTokens).toEqual({ input: 11_680, output: 2048 });
    expect(decisionOf(naive[1]!).estimatedCost.amount).toBe('0.06576');
    expect(inputTokensOf(inFrames(r, 'A', 'shrink-naive')[1]!.params)).toBe(11_680);

    const exact = only(r, 'A', 'shrink-exact');
    expect(exact).toHaveLength(2);
    expect(result(exact[0]!).stopReason).toBe('budget_exceeded');
    const retry = inFrames(r, 'A', 'shrink-exact')[1]!;
    expect(inputTokensOf(retry.params)).toBeLessThanOrEqual(6_426);
    expect(inputTokensOf(retry.params)).toBeGreaterThan(6_000);
    const served = result(exact[1]!);
    expect(['endTurn', 'maxTokens']).toContain(served.stopReason);
    expect(served.content).not.toEqual({ type: 'text', text: '' });
    expect(decisionOf(exact[1]!).estimatedTokens.input).toBeLessThanOrEqual(6_426);
    expect(r.A.c.completed).toBe(4); // under-budget, truncated (partial), transport, shrink-exact
    expect(r.A.c.abandoned).toBe(2); // preflight, shrink-naive
  });

  it('lane B: the same refusals as -32003 errors; budget_exhausted stays a result', () => {
    const r = run('rfc-budget-caps');
    // The same outcomes, the same spend: only the shape of the pre-flight refusal differs.
    expect(r.B.c.frames).toEqual(r.A.c.frames);
    expect(r.B.c.spendMicros).toBe(r.A.c.spendMicros);
    expect(r.B.c.completed).toBe(r.A.c.completed);
    for (const server of ['preflight', 'shrink-naive', 'shrink-exact']) {
      const a = only(r, 'A', server)[0]!;
      const b = only(r, 'B', server)[0]!;
      expect(result(a).stopReason).toBe('budget_exceeded');
      expect(error(b).code).toBe(-32003);
      expect(denialData(b)).toMatchObject({
        reason: 'policy.cost_cap',
        server,
        retryable: false
      });
      expect(decisionOf(b)).toEqual(decisionOf(a));
    }
    // Only a result can carry partial content.
    const [b] = only(r, 'B', 'truncated');
    expect(result(b!).stopReason).toBe('budget_exhausted');
    expect(result(b!).content).toEqual({ type: 'text', text: 'The cap ' });
    // And the shrinkers read the decision from the error as they did from the result.
    const retryB = inFrames(r, 'B', 'shrink-exact')[1]!;
    expect(inputTokensOf(retryB.params)).toBe(
      inputTokensOf(inFrames(r, 'A', 'shrink-exact')[1]!.params)
    );
  });
});

describe('prompt-cache-trap', () => {
  it('the cheaper model costs more in total, because it pays cold-cache input', () => {
    const r = run('prompt-cache-trap');
    const { A, B } = { A: r.A.c, B: r.B.c };
    // The lesson is honest: B's model is cheaper on every line of its rate card.
    const cards = Object.fromEntries(r.scenario.provider.cards.map((c) => [c.model, c]));
    const big = cards['example-model-v2']!;
    const lite = cards['example-model-lite']!;
    expect(Number(lite.inputPerMtok)).toBeLessThan(Number(big.inputPerMtok));
    expect(Number(lite.outputPerMtok)).toBeLessThan(Number(big.outputPerMtok));
    expect(lite.cachedInputPerMtok).toBeUndefined();
    // The same work in both lanes.
    expect(B.providerCalls).toBe(A.providerCalls);
    expect(B.tokensIn).toBe(A.tokensIn);
    for (const x of audits(r, 'A')) expect(x.model).toBe('example-model-v2');
    for (const x of audits(r, 'B')) expect(x.model).toBe('example-model-lite');
    // A's prefix is read from a warm cache on all but the cold calls.
    expect(r.A.cacheHits).toBeGreaterThanOrEqual(A.providerCalls - 2);
    // And yet B spends more.
    expect(B.spendMicros).toBeGreaterThan(A.spendMicros);
    expect(B.spendMicros).toBeGreaterThanOrEqual(1.5 * A.spendMicros);
  });
});

// ───────────────────────────── conformance and determinism ─────────────────────────────

describe('every frame the scenarios emit conforms to the MCP SDK schemas', () => {
  const SAMPLE = 2_000;

  it.each(NAMES)('%s', (name) => {
    const out = run(name).frames.filter((l) => l.direction === 'out');
    expect(out.length).toBeGreaterThan(0);
    const step = Math.max(1, Math.ceil(out.length / SAMPLE));
    let checked = 0;
    for (let i = 0; i < out.length; i += step) {
      const frame = out[i]!.frame;
      if (isResult(frame)) {
        expect(JSONRPCResultResponseSchema.safeParse(frame).error).toBeUndefined();
        expect(CreateMessageResultSchema.safeParse(frame.result).error).toBeUndefined();
      } else {
        expect(JSONRPCErrorResponseSchema.safeParse(frame).error).toBeUndefined();
      }
      checked++;
    }
    expect(checked).toBeGreaterThan(0);
  });
});

describe('determinism', () => {
  it('the same scenario and seed give identical frames and audit records', () => {
    const first = run('prompt-mutator');
    const second = execute('prompt-mutator');
    expect(second.frames.length).toBe(first.frames.length);
    expect(second.audit.length).toBe(first.audit.length);
    expect(JSON.stringify(second.frames)).toBe(JSON.stringify(first.frames));
    expect(JSON.stringify(second.audit)).toBe(JSON.stringify(first.audit));
  });
});
