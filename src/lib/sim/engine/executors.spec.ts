/**
 * The table executor (machine/authorize/fast.ts) against the actor executor: the same scenario
 * gives byte-identical frames.jsonl and audit.jsonl either way — on every ready-made scenario, on
 * fuzzed scenarios with mid-run edits (fuzz-cases.ts, the guarantees fuzz's own generator), and
 * on the host-level edges no scenario reaches (a cancellation, steps that throw, hang or answer
 * asynchronously). The simulation runs the table executor; the actor path is the reference.
 *
 * `EQUIV_RUNS` sets the number of fuzzed scenarios (default 8, a fixed seed; the guarantees fuzz
 * compares a third of its own random runs the same way), `EQUIV_SEED` their seed.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { createMachine } from 'xstate';
import { describe, expect, it } from 'vitest';
import type { AuthOutput } from '../../machine/authorize';
import { buildTable } from '../../machine/authorize/fast';
import { resolveClientConfig } from '../../machine/config';
import { defaultPolicy } from '../../machine/policy';
import type { SamplingParams } from '../../machine/types';
import { MemoryAuditLog } from '../../store/audit-log';
import { ConnectionDecisionStore } from '../../store/connection-store';
import type { DecisionStore } from '../../store/decision-store';
import type { ConsentSource, ProviderSource } from '../../client/driver';
import { ClientHost, type Executor } from '../../client/host';
// Both executors: the actor one is compared against the table.
import '../../client/actor-executor';
import { VirtualClock } from '../world/clock';
import { Simulation } from './engine';
import { applyEdits, caseArb, type Edit } from '../input/fuzz-cases';
import { SharedDecisionStore } from '../../store/shared-store';
import { cardsByModel, createProvider, DEFAULT_PROVIDER } from '../actors/provider';
import { auditLineJson, frameLineJson } from '../report/report';
import { Rng } from '../world/rng';
import { parseScenario } from '../input/scenario';

const EXECUTORS: readonly Executor[] = ['actor', 'table'];

/** A run's two files, line by line, as the CLI writes them. */
interface Files {
  frames: string[];
  audit: string[];
}

function runScenario(data: unknown, executor: Executor, edits: readonly Edit[] = []): Files {
  const parsed = parseScenario(data);
  if (!parsed.ok) throw new Error(`invalid scenario: ${JSON.stringify(parsed.errors)}`);
  const files: Files = { frames: [], audit: [] };
  const sim = new Simulation(parsed.scenario, {
    executor,
    onFrame: (l) => files.frames.push(frameLineJson(l)),
    onAudit: (r) => files.audit.push(auditLineJson(r))
  });
  applyEdits(sim, parsed.scenario.durationMs, edits);
  sim.runToEnd();
  return files;
}

/** Null when the two runs wrote the same bytes; else where they first differ. */
function difference(a: Files, b: Files): string | null {
  for (const file of ['frames', 'audit'] as const) {
    const x = a[file];
    const y = b[file];
    for (let i = 0; i < Math.max(x.length, y.length); i++)
      if (x[i] !== y[i])
        return `${file}.jsonl line ${i + 1}:\n  actor: ${x[i] ?? '(none)'}\n  table: ${y[i] ?? '(none)'}`;
  }
  return null;
}

const DIR = fileURLToPath(new URL('../../../../static/scenarios/', import.meta.url));
const FILES = readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();

describe('the table executor writes the bytes the actor executor writes', () => {
  it('finds the ready-made scenarios', () => {
    expect(FILES.length).toBeGreaterThanOrEqual(13);
  });

  it.each(FILES)('%s', (file) => {
    const text = readFileSync(DIR + file, 'utf8');
    const [actor, table] = EXECUTORS.map((e) => runScenario(text, e));
    expect(difference(actor!, table!)).toBeNull();
    expect(actor!.frames.length).toBeGreaterThan(0);
    expect(actor!.audit.length).toBeGreaterThan(0);
  });

  it('both take the askAbove path (a dialog skipped for a cheap call) the same way', () => {
    // cheap-calls is the ready-made scenario whose lane B skips dialogs under askAbove: the
    // comparison above covers that path only if the runs really took it.
    const text = readFileSync(DIR + 'cheap-calls.json', 'utf8');
    const [actor, table] = EXECUTORS.map((e) => runScenario(text, e));
    const skippedOf = (f: Files) => f.audit.filter((l) => l.includes('"consentSkipped":'));
    expect(skippedOf(actor!).length).toBeGreaterThan(100);
    expect(skippedOf(table!)).toEqual(skippedOf(actor!));
  });

  it('fuzzed scenarios with mid-run edits', () => {
    const runs = Number(process.env.EQUIV_RUNS ?? 8);
    const seed = Number(process.env.EQUIV_SEED ?? 9);
    let lines = 0;
    fc.assert(
      fc.property(caseArb, ({ scenario, edits }) => {
        const [actor, table] = EXECUTORS.map((e) => runScenario(scenario, e, edits));
        const diff = difference(actor!, table!);
        if (diff)
          throw new Error(
            `${diff}\nscenario: ${JSON.stringify(scenario)}\nedits: ${JSON.stringify(edits)}`
          );
        lines += actor!.frames.length + actor!.audit.length;
      }),
      { numRuns: runs, seed, endOnFailure: true }
    );
    // The generator makes populations that talk: the comparison covered real traffic.
    expect(lines).toBeGreaterThan(runs * 10);
  }, 120_000);
});

// ───────────────────────────── host-level edges ─────────────────────────────

const SERVER = 'release-notes';
const params = (n: number): SamplingParams => ({
  systemPrompt: 'You summarise release notes.',
  messages: [{ role: 'user', content: { type: 'text', text: `Summarise ${n % 3}.` } }],
  includeContext: 'thisServer',
  maxTokens: 4_000
});

interface Edge {
  store?: () => DecisionStore;
  consent?: (clock: VirtualClock) => ConsentSource;
  provider?: (clock: VirtualClock) => ProviderSource;
  /** Cancel the request with this index this long after it was sent. */
  cancel?: { index: number; afterMs: number };
}

/** Nine requests (three identities, so some join and replay), every 4 s; what each got. */
async function runEdge(edge: Edge, executor: Executor): Promise<string[]> {
  const clock = new VirtualClock(Date.UTC(2026, 2, 10, 9));
  const outs: string[] = [];
  const log = new MemoryAuditLog();
  const provider = createProvider(DEFAULT_PROVIDER, clock, new Rng(1));
  const host = new ClientHost({
    config: resolveClientConfig({ store: 'durable' }),
    policy: defaultPolicy(),
    cards: cardsByModel(DEFAULT_PROVIDER.cards),
    store: edge.store?.() ?? new SharedDecisionStore(),
    audit: log,
    clock,
    consent:
      edge.consent?.(clock) ??
      ((_input, answer) => {
        const t = clock.setTimeout(() => answer(true), 1_500);
        return () => clock.clearTimeout(t);
      }),
    provider: edge.provider?.(clock) ?? provider.source,
    executor
  });
  const record = (o: AuthOutput) => outs.push(`${clock.now()} ${JSON.stringify(o)}`);
  for (let i = 0; i < 9; i++) {
    const receivedAt = clock.now();
    const h = host.authorize(
      { id: i + 1, server: SERVER, connection: `${SERVER}#1`, params: params(i), receivedAt },
      record
    );
    if (edge.cancel?.index === i) clock.setTimeout(() => h.cancel(), edge.cancel.afterMs);
    for (let k = 0; k < 8; k++) {
      // Promises from an asynchronous store settle between the virtual clock's steps.
      await new Promise((r) => setImmediate(r));
      clock.runUntil(clock.now() + 500);
    }
  }
  for (let k = 0; k < 400 && outs.length < 9; k++) {
    await new Promise((r) => setImmediate(r));
    clock.runUntil(clock.now() + 1_000);
  }
  expect(outs).toHaveLength(9);
  return outs;
}

/** A store whose every answer comes a microtask later (as an IndexedDB-backed one may). */
function asyncStore(): DecisionStore {
  const inner = new SharedDecisionStore();
  return new Proxy(inner, {
    get(target, key) {
      const v = Reflect.get(target, key, target) as unknown;
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) =>
        Promise.resolve().then(() => (v as (...a: unknown[]) => unknown).apply(target, args));
    }
  });
}

/** A store with `method` replaced by `impl`. */
function storeWith(method: 'lookup' | 'commit', impl: () => never | Promise<never>) {
  return (): DecisionStore => {
    const s = new ConnectionDecisionStore();
    (s as unknown as Record<string, unknown>)[method] = impl;
    return s;
  };
}

const slowStream =
  (clock: VirtualClock): ProviderSource =>
  (_input, emit) => {
    let live = true;
    clock.setTimeout(() => {
      if (!live) return;
      emit({ type: 'provider.started', cachedInputTokens: 0 });
      const tick = () => {
        if (!live) return;
        emit({ type: 'provider.chunk', text: 'word ', tokens: 50 });
        clock.setTimeout(tick, 1_000);
      };
      tick();
    }, 100);
    return () => {
      live = false;
    };
  };

const EDGES: [string, Edge][] = [
  ['the default rig', {}],
  ['a cancellation mid-stream', { provider: slowStream, cancel: { index: 0, afterMs: 3_500 } }],
  [
    'a cancellation while the consent dialog is open',
    {
      consent: () => () => undefined,
      cancel: { index: 1, afterMs: 200 }
    }
  ],
  ['a deadline that cuts a stream', { provider: slowStream }],
  [
    'a consent source that throws',
    {
      consent: () => () => {
        throw new Error('consent broke');
      }
    }
  ],
  [
    'a provider that throws',
    {
      provider: () => () => {
        throw new Error('provider broke');
      }
    }
  ],
  [
    'a store lookup that throws',
    {
      store: storeWith('lookup', () => {
        throw new Error('lookup broke');
      })
    }
  ],
  [
    'a store lookup that rejects',
    { store: storeWith('lookup', () => Promise.reject(new Error('no'))) }
  ],
  [
    'a store lookup that never answers',
    { store: storeWith('lookup', () => new Promise(() => {}) as never) }
  ],
  ['a commit that rejects', { store: storeWith('commit', () => Promise.reject(new Error('no'))) }],
  [
    'a commit that never answers',
    { store: storeWith('commit', () => new Promise(() => {}) as never) }
  ],
  ['a store that answers asynchronously', { store: asyncStore }]
];

describe('the table executor answers like the actor executor on the host-level edges', () => {
  it.each(EDGES)('%s', async (_name, edge) => {
    const actor = await runEdge(edge, 'actor');
    const table = await runEdge(edge, 'table');
    expect(table).toEqual(actor);
  });
});

describe('the transition table is read from the machine', () => {
  it('refuses a machine feature the interpreter does not implement, naming it', () => {
    const parallel = createMachine({
      initial: 'a',
      context: () => ({}),
      output: () => ({}),
      states: { a: { type: 'parallel', states: { x: {}, y: {} } } }
    });
    expect(() => buildTable(parallel)).toThrow(/parallel state 'a'/);
  });
});
