/**
 * Inputs at the limits' edges, for the input fuzz (input-fuzz.spec.ts): a small scenario that
 * spells out every number a scenario can hold — every behaviour's parameters included — and
 * the values an author (or an attacker) puts at a bound: zero, just under and over the bounds,
 * huge, 1e400 (which JSON.parse reads as Infinity), and the spellings of NaN and Infinity.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { formatPath } from '../../machine/policy';
import { estimateCopyBytes } from '../engine/engine-size';
import { guardedSimulation } from '../checks/guard';
import { workRefusal } from './limits';
import { parseScenario } from './scenario';
import { BEHAVIOURS } from '../actors/servers/behaviours';

const retryable = JSON.parse(
  readFileSync(
    fileURLToPath(new URL('../../../../static/scenarios/retryable-loop.json', import.meta.url)),
    'utf8'
  )
) as { lanes: { B: { client: object; policy: { defaults: object } } } };

/** The defaults JSON cannot spell: the tight loop's unbounded Infinity is null. */
const SPELLED: Record<string, unknown> = { maxRetries: null };

/** One server of every behaviour, two tasks each, every parameter written out. */
export const EDGE_BASE = {
  version: 1,
  name: 'edges',
  title: 'Every number a scenario holds',
  seed: 19,
  durationMs: 60_000,
  sampleMs: 1_000,
  restarts: [30_000],
  servers: Object.entries(BEHAVIOURS).map(([behaviour, b], i) => ({
    name: `s${i}`,
    behaviour,
    count: 1,
    params: Object.fromEntries(
      Object.entries(b.defaults).map(([k, v]) => [k, v === Infinity ? SPELLED[k] : v])
    ),
    request: {
      systemPrompt: 'You summarise.',
      prompt: 'Summarise item {n}.',
      promptTokens: 200,
      prefixTokens: 100,
      maxTokens: 200,
      temperature: 0.5
    },
    intervalMs: 20_000,
    tasks: 2,
    startAfterMs: 1_000,
    timeoutMs: 10_000
  })),
  provider: {
    latencyMs: 400,
    latencyJitter: 0.5,
    chunkTokens: 50,
    chunkIntervalMs: 40,
    outputFraction: 0.6,
    transportFailureRate: 0.05,
    providerErrorRate: 0.05,
    slowRate: 0.05,
    slowFactor: 200,
    cacheTtlMs: 300_000,
    failures: [{ server: 's0', kind: 'transport', call: 1 }]
  },
  user: { approveBase: 0.9, fatiguePerPrompt: 0.01, maxApprove: 0.95, responseMs: 2_000 },
  lanes: {
    A: {
      label: 'rate-limited, asks',
      client: {
        consentTimeoutMs: 5_000,
        deadlineMs: 30_000,
        alert: { threshold: 5, windowMs: 60_000 },
        allowedTtl: { kind: 'ms', ms: 60_000 },
        reasons: { 'policy.rate_limit': { ttl: { kind: 'ms', ms: 2_000 } } }
      },
      policy: {
        version: 1,
        defaults: {
          ...retryable.lanes.B.policy.defaults,
          maxInputTokens: 32_000,
          rateLimit: { requests: 5, windowMs: 10_000 },
          perCallCap: { tokens: 20_000 },
          consent: 'ask'
        },
        servers: {}
      }
    },
    // Every request refused, as retryable: every behaviour retries as far as it goes.
    B: {
      label: 'refuses every request',
      client: retryable.lanes.B.client,
      policy: {
        version: 1,
        defaults: { ...retryable.lanes.B.policy.defaults, sampling: false },
        servers: {}
      }
    }
  }
};

/** JSON literals at the edges; the last ones are not JSON at all. */
export const EDGE_LITERALS = [
  '0',
  '-0',
  '1',
  '9',
  '10',
  '0.5',
  '-1',
  '1000000',
  '1000001',
  '2592000000',
  '31622400001',
  '1e9',
  '9007199254740993',
  '1e308',
  '1e400',
  '-1e400',
  'null',
  '"NaN"',
  '"1e400"',
  'NaN',
  'Infinity',
  '-Infinity'
] as const;

export type EdgePath = (string | number)[];

/** Every place in `v` that holds a number. */
export function numericPaths(v: unknown, at: EdgePath = [], out: EdgePath[] = []): EdgePath[] {
  if (typeof v === 'number') out.push(at);
  else if (Array.isArray(v)) v.forEach((x, i) => numericPaths(x, [...at, i], out));
  else if (v && typeof v === 'object')
    for (const [k, x] of Object.entries(v)) numericPaths(x, [...at, k], out);
  return out;
}

/** `base` as JSON text with the number at `path` written as `literal`. */
export function withLiteral(base: unknown, path: EdgePath, literal: string): string {
  const copy = structuredClone(base) as Record<string | number, unknown>;
  const parent = path
    .slice(0, -1)
    .reduce<Record<string | number, unknown>>(
      (o, k) => o[k] as Record<string | number, unknown>,
      copy
    );
  parent[path[path.length - 1]!] = '\u0000edge\u0000';
  return JSON.stringify(copy).replace('"\\u0000edge\\u0000"', literal);
}

/**
 * Work a case may do here: an admitted one whose estimate is larger is within the budget (that
 * is what admitted means) and stops at RUN_EVENTS, or is not run for its megabytes of text
 * (hashing a 4 MB prompt a thousand times takes a minute, as the budget allows).
 */
const RUN_EVENTS = 200_000;
const RUN_MEGABYTES = 100;
/**
 * What an engine holds whatever its work (servers, clock, counters: engine-size.ts's base, and
 * the metric samples the limits allow at 100,000 a lane).
 */
const ENGINE_BASE_BYTES = 400_000 + 2 * 100_000 * 13 * 8;

/**
 * The scenario with `literal` at `path`, as a file and as a share link: refused at the number's
 * path, or a place that depends on it; or admitted within the budget and run doing no more
 * than its estimate.
 */
export function checkEdge(
  path: EdgePath,
  literal: string,
  tally: { tried: number; accepted: number; refused: number },
  expectPlainLine: (line: string) => void,
  /** The text as a share link, opened as the page opens it (ui/share.ts). */
  viaLink: (text: string) => { ok: true; data: unknown } | { ok: false; error: string }
): void {
  const text = withLiteral(EDGE_BASE, path, literal);
  const where = `${formatPath(path)} = ${literal}`;
  tally.tried++;
  const r = parseScenario(text);
  // The page's share link carries the same text, and meets the same parser.
  const link = viaLink(text);
  if (link.ok) expect(parseScenario(link.data)).toEqual(r);
  else {
    expect(r.ok).toBe(false);
    expectPlainLine(link.error);
  }
  if (!r.ok) {
    tally.refused++;
    for (const e of r.errors) expectPlainLine(`${e.path}: ${e.message}`);
    // At the number's own path, or a place that depends on it (samples, chunks a response,
    // the object a union lost it in), or the whole run ($: not JSON, or the work).
    const at = formatPath(path);
    const places = r.errors.map((e) => e.path);
    const near = places.some(
      (p) => p === '$' || at.startsWith(p) || p === '$.sampleMs' || p.endsWith('.request.maxTokens')
    );
    expect(near, `${where}: ${places.join(', ')}`).toBe(true);
    return;
  }
  tally.accepted++;
  // Admitted: within the budget, and the run does no more than its estimate said.
  expect(workRefusal(r.work)).toBeNull();
  if (r.work.megabytes > RUN_MEGABYTES) return;
  const { sim, guard } = guardedSimulation(r.scenario);
  sim.advanceTo(sim.end, Math.min(RUN_EVENTS, r.work.events + 1));
  // Bounded memory, structurally (issue #19): what the engine holds after the run (stored
  // decisions, requests in flight, presentation histories, the checker's records, samples; its
  // estimated size, as engine checkpoints are budgeted) is within the megabytes the work estimate
  // admitted it for — never a figure that grows past what the limits counted.
  expect(estimateCopyBytes(sim, guard), where).toBeLessThanOrEqual(
    ENGINE_BASE_BYTES + r.work.megabytes * 1e6
  );
  const requests = sim.lanes.A.metrics.counters.requests + sim.lanes.B.metrics.counters.requests;
  expect(requests, where).toBeLessThanOrEqual(r.work.requests);
  expect(sim.events, where).toBeLessThanOrEqual(r.work.events);
  expect(Number.isFinite(sim.now), where).toBe(true);
  if (!sim.done) expect(r.work.events, where).toBeGreaterThan(RUN_EVENTS);
}
