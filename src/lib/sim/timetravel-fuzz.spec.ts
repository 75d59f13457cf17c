/**
 * Time travel on generated timelines (issue #10): random sequences of plays, edits, restarts,
 * forks (and forks of forks), seeks back and forth and reloads, on the lessons' scenarios. After
 * every step the run's guarantees hold, and each kind of step keeps its promise:
 *
 * - a seek back and then forward to where the run was shows the same lanes as before (unless it
 *   went back before a fork point: the run is then the one the fork was made from);
 * - a fork leaves the other lane's numbers, to the end of the run, those of the branch it was
 *   made on;
 * - a reload (the run's timeline, re-simulated, then a client restart) equals the live run with a
 *   Restart client at the same moment.
 *
 * A failure prints its seed and path: `FUZZ_SEED=<seed> FUZZ_PATH=<path> npx vitest run <file>`.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parsePolicy, type Policy } from '../machine/policy';
import type { ClientConfigInput } from '../machine/config';
import type { ForkSpec } from './fork';
import { clientArb, policyBlockArb, scenarioArb } from './fuzz-cases';
import type { Command, Reply, Snapshot } from './protocol';
import type { LaneId } from './scenario';
import { Session } from './session';
import { only, snap } from './replies.testing';

const SCENARIOS = [
  'reconnect-bypass',
  'retryable-loop',
  'tired-user',
  'silence-vs-denial',
  'budget-window',
  'transient-marked-permanent',
  'prompt-mutator'
];
const RUNS = Number(process.env.FUZZ_RUNS ?? 25);
/** Random valid scenarios (fuzz-cases.ts) too: behaviours, tiny budgets, short TTLs, faults. */
const RANDOM_RUNS = Number(process.env.FUZZ_RANDOM_RUNS ?? 6);

const data = new Map(
  SCENARIOS.map((n) => [
    n,
    JSON.parse(readFileSync(`static/scenarios/${n}.json`, 'utf8')) as Record<string, unknown>
  ])
);

type Change = { kind: 'config'; client: ClientConfigInput } | { kind: 'policy'; policy: Policy };

type Op =
  | { op: 'advance'; frac: number }
  | { op: 'restart' }
  | { op: 'edit'; lane: LaneId; change: Change }
  | { op: 'fork'; lane: LaneId; change: Change }
  | { op: 'seekBack'; frac: number }
  | { op: 'reload' };

const lane = fc.constantFrom<LaneId>('A', 'B');
const change: fc.Arbitrary<Change> = fc.oneof(
  clientArb.map((client) => ({ kind: 'config' as const, client: client as ClientConfigInput })),
  policyBlockArb.map((defaults) => {
    const p = parsePolicy({ version: 1, defaults, servers: {} });
    if (!p.ok) throw new Error(`the generator made an invalid policy: ${JSON.stringify(p)}`);
    return { kind: 'policy' as const, policy: p.policy };
  })
);
/**
 * A fraction in [0, max]: mostly spread evenly (doubles cluster at their ends: seeks to the very
 * start, before any engine checkpoint), sometimes at the ends.
 */
const fraction = (max: number) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.nat({ max: 1000 }).map((n) => (n / 1000) * max) },
    { weight: 1, arbitrary: fc.double({ min: 0, max, noNaN: true }) }
  );

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant('advance' as const),
      frac: fraction(0.4)
    })
  },
  { weight: 1, arbitrary: fc.constant({ op: 'restart' as const }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('edit' as const), lane, change }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('fork' as const), lane, change }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('seekBack' as const),
      frac: fraction(1)
    })
  },
  { weight: 1, arbitrary: fc.constant({ op: 'reload' as const }) }
);
const ops = fc.array(op, { minLength: 2, maxLength: 9 });
const caseArb = fc.record({ scenario: fc.constantFrom(...SCENARIOS), ops });
const randomCaseArb = fc.record({ scenario: scenarioArb, ops });

/** Seeks back made, and how many were restored from an engine checkpoint (not re-simulated). */
const tally = { seeks: 0, copies: 0 };

/**
 * Two sessions of one timeline: `s` restores seeks from engine checkpoints taken every hundred
 * hundred events (engine-checkpoints.ts), `r` re-simulates every seek from the start. Every
 * command goes to both, and both must answer with the same view: a copy restores exactly what a
 * re-simulation does.
 */
class Pair {
  constructor(
    readonly s: Session,
    readonly r: Session
  ) {}

  handle(cmd: Command, step: string): Reply[] {
    const back = cmd.type === 'seek' && this.s.sim !== null && cmd.t < this.s.sim.now;
    const copies = this.s.copyRestores;
    const a = this.s.handle(cmd);
    if (back) {
      tally.seeks++;
      tally.copies += this.s.copyRestores - copies;
    }
    const b = this.r.handle(cmd);
    const views = (rs: Reply[]) => JSON.stringify(rs.filter((x) => x.type !== 'checkpoints'));
    const [x, y] = [views(a), views(b)];
    if (x !== y)
      throw new Error(
        `${step} (${cmd.type}): restored from a copy vs re-simulated differ at ${firstDifference(JSON.parse(x), JSON.parse(y))}`
      );
    return a;
  }

  snapshot(): Snapshot {
    const [a, b] = [this.s.snapshot(), this.r.snapshot()];
    const [x, y] = [JSON.stringify(a), JSON.stringify(b)];
    if (x !== y)
      throw new Error(`snapshot: copy vs re-simulated differ at ${firstDifference(a, b)}`);
    return a;
  }
}

/** Where two JSON values first differ, and how: a path and both values (short). */
function firstDifference(x: unknown, y: unknown, path = '$'): string {
  if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) {
    return `${path}: ${JSON.stringify(x)?.slice(0, 200)} vs ${JSON.stringify(y)?.slice(0, 200)}`;
  }
  const keys = new Set([...Object.keys(x), ...Object.keys(y)]);
  for (const k of keys) {
    const a = (x as Record<string, unknown>)[k];
    const b = (y as Record<string, unknown>)[k];
    if (JSON.stringify(a) !== JSON.stringify(b)) return firstDifference(a, b, `${path}.${k}`);
  }
  return `${path}: (equal?)`;
}

function load(scenario: unknown, at?: Extract<Reply, { type: 'timeline' }>): Pair {
  return new Pair(
    loadOne(scenario, new Session({ copyEvery: 100 }), at),
    loadOne(scenario, new Session({ copies: false }), at)
  );
}

function loadOne(
  scenario: unknown,
  s: Session,
  at?: Extract<Reply, { type: 'timeline' }>
): Session {
  const rs = s.handle({
    type: 'load',
    scenario,
    ...(at ? { at: { t: at.t, actions: at.actions, fork: at.fork } } : {})
  });
  const [r] = only(rs, 'loaded');
  if (!r?.ok) throw new Error(`not loaded: ${JSON.stringify(r)}`);
  return s;
}

/** The broken guarantees of a snapshot, one line each (none expected). */
function broken(view: Snapshot, step: string): void {
  const bad = view.guarantees.filter((g) => g.status === 'broken');
  if (bad.length)
    throw new Error(
      `${step}: ${bad.map((g) => `${g.id}: ${JSON.stringify(g.offenders?.[0] ?? g)}`).join('; ')}`
    );
}

const lanesOf = (v: Snapshot) => JSON.stringify(v.lanes);

function play(scenario: unknown, ops: readonly Op[]): void {
  let s = load(scenario);
  let view = s.snapshot();
  const { start, end } = view;
  const span = end - start;
  ops.forEach((o, i) => {
    const step = `step ${i} (${o.op}) at ${view.now - start} ms`;
    switch (o.op) {
      case 'advance':
        view = snap(s.handle({ type: 'advance', to: view.now + Math.floor(o.frac * span) }, step));
        break;
      case 'restart':
        view = snap(s.handle({ type: 'restart' }, step));
        break;
      case 'edit':
        view =
          o.change.kind === 'config'
            ? snap(
                s.handle(
                  { type: 'setConfig', lane: o.lane, client: o.change.client, what: 'edit' },
                  step
                )
              )
            : snap(s.handle({ type: 'setPolicy', lane: o.lane, policy: o.change.policy }, step));
        break;
      case 'seekBack': {
        const was = view;
        const to = start + Math.floor(o.frac * (view.now - start));
        const forks = (s: Pair) =>
          JSON.stringify(only(s.handle({ type: 'fork?' }, step), 'forkState'));
        const before = forks(s);
        view = snap(s.handle({ type: 'seek', t: to }, step));
        expect(view.now, step).toBe(to);
        broken(view, step);
        // Forward again to where it was: the same run — when the seek stayed on the run's
        // branch. (Back before a fork point, the run is the one the fork was made from.)
        if (forks(s) === before) {
          const again = snap(s.handle({ type: 'seek', t: was.now }, step));
          expect(lanesOf(again), step).toBe(lanesOf(was));
          expect(again.marks.length, step).toBe(was.marks.length);
          view = snap(s.handle({ type: 'seek', t: to }, step));
        }
        break;
      }
      case 'fork': {
        const at = view.now;
        const other: LaneId = o.lane === 'A' ? 'B' : 'A';
        // The branch the fork is made on, to the end: the other lane's numbers there.
        const unforked = snap(s.handle({ type: 'seek', t: end }, step));
        view = snap(s.handle({ type: 'seek', t: at }, step));
        const fork: ForkSpec = {
          version: 1,
          atMs: at - start,
          lane: o.lane,
          change:
            o.change.kind === 'config'
              ? ({ kind: 'config', client: o.change.client } as ForkSpec['change'])
              : o.change
        };
        const rs = s.handle({ type: 'fork', fork }, step);
        const [f] = only(rs, 'forked');
        if (!f?.ok) throw new Error(`${step}: the fork failed: ${JSON.stringify(f)}`);
        view = snap(rs);
        const forkedEnd = snap(s.handle({ type: 'seek', t: end }, step));
        broken(forkedEnd, step);
        expect(JSON.stringify(forkedEnd.lanes[other].counters), `${step}: lane ${other}`).toBe(
          JSON.stringify(unforked.lanes[other].counters)
        );
        view = snap(s.handle({ type: 'seek', t: at }, step));
        expect(view.now, step).toBe(at);
        break;
      }
      case 'reload': {
        const [tl] = only(s.handle({ type: 'timeline' }, step), 'timeline');
        const reloaded = load(scenario, tl);
        const live = snap(s.handle({ type: 'restart' }, step));
        const back = reloaded.snapshot();
        expect(back.now, step).toBe(live.now);
        expect(lanesOf(back), step).toBe(lanesOf(live));
        // Carry on with the reloaded run: what follows tests it as much as the live one.
        s = reloaded;
        view = back;
        break;
      }
    }
    broken(view, step);
  });
  // And the end: both lanes' guarantees over the whole timeline.
  broken(snap(s.handle({ type: 'advance', to: end }, 'the end')), 'the end');
}

describe('time travel on generated timelines', () => {
  it(`${RUNS} timelines: seeks, forks of forks and reloads keep their promises`, () => {
    const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
    const path = process.env.FUZZ_PATH;
    fc.assert(
      fc.property(caseArb, ({ scenario, ops }) => play(data.get(scenario), ops)),
      {
        numRuns: RUNS,
        ...(seed !== undefined ? { seed } : {}),
        ...(path ? { path } : {}),
        endOnFailure: true
      }
    );
    // The copies were put to the test: a good share of the seeks back (those not to the first seconds) restored from one.
    expect(tally.copies).toBeGreaterThan(tally.seeks / 10);
  }, 240_000);

  it(`${RANDOM_RUNS} timelines on random scenarios`, () => {
    const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
    const path = process.env.FUZZ_PATH;
    fc.assert(
      fc.property(randomCaseArb, ({ scenario, ops }) => {
        try {
          play(scenario, ops);
        } catch (e) {
          throw new Error(
            `${e instanceof Error ? e.message : String(e)}\nscenario: ${JSON.stringify(scenario)}`
          );
        }
      }),
      {
        numRuns: RANDOM_RUNS,
        ...(seed !== undefined ? { seed } : {}),
        ...(path ? { path } : {}),
        endOnFailure: true
      }
    );
  }, 240_000);
});
