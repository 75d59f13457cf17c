/**
 * `npm run bench`: the engine's throughput on the standard retry storm (bench/retry-storm.json),
 * for two request classes — small (the storm with no padding: ~100–200 bytes of params) and
 * large (the storm as written: ~16 KB) — each against its own identity floor (RFC 8785
 * canonicalisation + SHA-256 of the same requests, with the project's own libraries) measured in
 * the same run. Then the same storm checked by its invariants (as the CLI and the worker run
 * it), the storm at 12, 50 and 200 servers, a simulated 24 hours of it, and the heap after that
 * day. The last line is `ratio R`, R = engine / floor on small requests.
 *
 * Figures, not assertions: other work on the machine moves wall-clock figures, so read the
 * ratios (engine and floor measured back to back) and the load printed beside them.
 *
 *   BENCH_SKIP=scale,day,guard   leave parts out
 *   BENCH_SCALE_HOURS=0.25          simulated hours per scale point
 *   --only=day,scale                run only these parts (classes, guard, scale, day, handler);
 *                                   `npm run bench:day` is `--only=day`: the simulated 24 hours
 *                                   alone
 *
 * `handler` (scripts/bench-handler.ts): the shipped handler (its esbuild bundle) through a real
 * SDK round trip against a bare handler (wall-clock rates, and CPU µs per request of both with
 * their ratio: the figure to read on a loaded machine; bytes allocated and promoted per request),
 * over the in-memory transport and over one that delivers each message in its own turn as stdio
 * does; the handler alone in CPU µs and bytes per request, without and with an AbortSignal made
 * per request; and fileStore commits per second.
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { sha256Rounds } from '../src/lib/machine/sha256';
import {
  clearPayloadMemo,
  identityMemoStats,
  useIdentityMemo
} from '../src/lib/machine/authorize/fast-identity';
import { requestIdentity } from '../src/lib/machine/identity';
import { sdkFrameProblem } from '../src/lib/sim/checks/conformance';
import { Simulation, type SimulationOptions } from '../src/lib/sim/engine/engine';
import { guardedSimulation } from '../src/lib/sim/checks/guard';
import { brokenLine } from '../src/lib/sim/checks/invariants';
import { parseScenario, type Scenario } from '../src/lib/sim/input/scenario';
import { benchHandler } from './bench-handler';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const args = process.argv.slice(2);
const file = args.find((a) => !a.startsWith('--')) ?? 'bench/retry-storm.json';
const only = args
  .find((a) => a.startsWith('--only='))
  ?.slice('--only='.length)
  .split(',');
const raw = JSON.parse(readFileSync(file, 'utf8')) as {
  servers: { count?: number; request: Record<string, unknown> }[];
};

function parse(data: unknown): Scenario {
  const parsed = parseScenario(data);
  if (!parsed.ok) {
    console.error(`${file}: ${parsed.errors[0]?.path}: ${parsed.errors[0]?.message}`);
    process.exit(2);
  }
  return parsed.scenario;
}

/**
 * The storm with `n` servers in all, shared among its server kinds in their proportions, and
 * with `promptTokens` of padding per request (undefined: as written).
 */
function storm(n: number | null, promptTokens?: number): Scenario {
  const total = raw.servers.reduce((a, x) => a + (x.count ?? 1), 0);
  let left = n ?? total;
  const servers = raw.servers.map((x, i) => {
    const count =
      n === null
        ? (x.count ?? 1)
        : i === raw.servers.length - 1
          ? left
          : Math.max(1, Math.round(((x.count ?? 1) * n) / total));
    left -= count;
    return {
      ...x,
      count,
      request: promptTokens === undefined ? x.request : { ...x.request, promptTokens }
    };
  });
  return parse({ ...raw, servers });
}

const skipped = new Set((process.env.BENCH_SKIP ?? '').split(',').filter(Boolean));
const skip = {
  has: (part: string) => skipped.has(part) || (only !== undefined && !only.includes(part))
};
const scaleHours = Number(process.env.BENCH_SCALE_HOURS ?? 0.25);
const HOUR = 3_600_000;
const large = storm(null);
/** The same storm without padding: each request is its template's prompt and options only. */
const small = storm(null, 0);

const load = () => `load ${loadavg()[0]!.toFixed(2)}`;
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
// The steady state from the first request: the written-out SHA-256 rounds, which a run fetches
// once it has hashed 16 MiB (a synchronous benchmark loop would never let that import land).
await sha256Rounds(true).ready;

interface Run {
  ms: number;
  /** CPU time of this process over the run (less moved by other work than wall time). */
  cpuMs: number;
  requests: number;
  kept: [string, unknown][];
  sim: Simulation;
}

/** Run `hours` of `s`; keep every `keepEvery`-th request's params for the floor. */
function run(s: Scenario, hours: number, keepEvery: number, guarded = false): Run {
  const kept: [string, unknown][] = [];
  let requests = 0;
  const opts: SimulationOptions = {
    onFrame: (l) => {
      if (l.direction !== 'in') return;
      if (requests++ % keepEvery === 0)
        kept.push([l.server, (l.frame as { params: unknown }).params]);
    }
  };
  const scenario = { ...s, durationMs: hours * HOUR };
  const g = guarded ? guardedSimulation(scenario, opts, { validate: sdkFrameProblem }) : null;
  const sim = g ? g.sim : new Simulation(scenario, opts);
  // Each run hashes its own requests: none starts with the canonical texts of the one before.
  clearPayloadMemo();
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  sim.runToEnd();
  const ms = performance.now() - t0;
  const c1 = process.cpuUsage(c0);
  const cpuMs = (c1.user + c1.system) / 1000;
  if (g) {
    const broken = brokenLine(g.guard.results());
    if (broken) throw new Error(`a guarantee broke in the benchmark: ${broken}`);
  }
  return { ms, cpuMs, requests, kept, sim };
}

/** Identity alone of the kept requests, repeated until it has run for at least `minMs`. */
function floor(kept: [string, unknown][], minMs = 400): { rps: number; cpuRps: number } {
  let n = 0;
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  do {
    for (const [s, p] of kept) requestIdentity(s, p);
    n += kept.length;
  } while (performance.now() - t0 < minMs);
  const c1 = process.cpuUsage(c0);
  return {
    rps: (n / (performance.now() - t0)) * 1000,
    cpuRps: (n / ((c1.user + c1.system) / 1000)) * 1000
  };
}

function meanBytes(kept: [string, unknown][]): number {
  return kept.reduce((n, [, p]) => n + JSON.stringify(p).length, 0) / kept.length;
}

/** One request class: the engine for `hours`, then the floor over the same requests. */
function requestClass(label: string, s: Scenario, hours: number, keepEvery: number) {
  // Warm the JIT on the same run first, so neither side pays for compilation (the floor warms in
  // its own loop): a short warm-up left the first simulated hour half compiled.
  run(s, hours, keepEvery);
  const m0 = { ...identityMemoStats };
  // Best of three for each side, engine and floor interleaved: on a shared machine a single
  // second-long measurement moves by a third from one run to the next.
  let e = run(s, hours, keepEvery);
  let f = floor(e.kept);
  for (let i = 0; i < 2; i++) {
    const e2 = run(s, hours, keepEvery);
    if (e2.cpuMs < e.cpuMs) e = e2;
    const f2 = floor(e.kept);
    if (f2.cpuRps > f.cpuRps) f = f2;
  }
  const memo = (k: keyof typeof identityMemoStats) => identityMemoStats[k] - m0[k];
  const share = (k: keyof typeof identityMemoStats) =>
    `${((memo(k) / (memo('byObject') + memo('byPayload') + memo('hashed'))) * 100).toFixed(0)} %`;
  const engineRps = (e.requests / e.ms) * 1000;
  const engineCpuRps = (e.requests / e.cpuMs) * 1000;
  // CPU time is what this process got: other work on the machine moves it far less than the
  // wall clock, so the ratio is taken on it (wall-clock figures beside it).
  const ratio = engineCpuRps / f.cpuRps;
  console.log(
    `${label} ${Math.round(meanBytes(e.kept))} B params: engine ${fmt(engineRps)} req/s wall, ${fmt(engineCpuRps)} req/s cpu (${fmt(e.requests)} requests, ${hours} h simulated in ${(e.ms / 1000).toFixed(2)} s); floor ${fmt(f.rps)} req/s wall, ${fmt(f.cpuRps)} req/s cpu; ratio ${ratio.toFixed(3)} (wall ${(engineRps / f.rps).toFixed(3)}; best of 3 each)  [${load()}]`
  );
  // The engine hashes a params object once (a retry resends the same object) and a canonical
  // text once (a serialiser's variant canonicalises alike); the floor hashes every request.
  console.log(
    `       identity: ${share('hashed')} of requests hashed, ${share('byObject')} answered for the same params object, ${share('byPayload')} for the same canonical text`
  );
  return ratio;
}

console.log(`scenario ${large.name} (${large.servers.length} servers, 2 lanes)`);
let smallRatio: number | null = null;
if (!skip.has('classes')) {
  smallRatio = requestClass('small', small, 1, 1);
  requestClass('16 KB', large, 1, 4);
  // The same two classes with every request hashed: the engine's own cost beside the floor's.
  useIdentityMemo(false);
  requestClass('small, memo off', small, 1, 1);
  requestClass('16 KB, memo off', large, 1, 4);
  useIdentityMemo(true);
}

if (!skip.has('guard')) {
  run(small, 1, 1_000_000, true); // warm: the checks compile too
  const g = run(small, 1, 1_000_000, true);
  const e = run(small, 1, 1_000_000);
  console.log(
    `checked small storm under its invariants (SDK frame schemas): ${fmt((g.requests / g.ms) * 1000)} req/s vs ${fmt((e.requests / e.ms) * 1000)} unchecked (${((g.ms / e.ms - 1) * 100).toFixed(0)} % overhead)  [${load()}]`
  );
}

if (!skip.has('scale')) {
  console.log(`scale (small requests, ${scaleHours} h simulated each):`);
  for (const n of [12, 50, 200]) {
    const r = run(storm(n, 0), scaleHours, 1_000_000);
    const rps = (r.requests / r.ms) * 1000;
    console.log(
      `  ${String(n).padStart(3)} servers  ${fmt(r.requests).padStart(9)} requests  ${fmt(rps).padStart(7)} req/s  ${((1000 / rps) * 1000).toFixed(1).padStart(6)} µs/request  simulated/wall ${fmt((scaleHours * HOUR) / r.ms)}× (cpu ${((r.cpuMs / r.requests) * 1000).toFixed(1)} µs/request)  [${load()}]`
    );
  }
}

if (!skip.has('day')) {
  gc();
  const before = process.memoryUsage().heapUsed;
  const day = run(large, 24, 1_000_000);
  gc();
  const heap = process.memoryUsage().heapUsed;
  console.log(
    `simulated 24 h (${file}): ${(day.ms / 1000).toFixed(1)} s of wall time (cpu ${(day.cpuMs / 1000).toFixed(1)} s), ${fmt(day.requests)} requests, ${fmt((day.requests / day.ms) * 1000)} req/s  [${load()}]`
  );
  console.log(
    `heap after the day: ${(heap / 2 ** 20).toFixed(1)} MB (${((heap - before) / 2 ** 20).toFixed(1)} MB held by the finished simulation, after GC)`
  );
  // Keep the simulation reachable until the heap was read.
  if (day.sim.now < 0) console.log(day.sim.now);
}

if (!skip.has('handler')) await benchHandler();

if (smallRatio !== null) console.log(`ratio ${smallRatio.toFixed(2)}`);
