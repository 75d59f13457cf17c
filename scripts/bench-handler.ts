/**
 * The handler's line of `npm run bench` (issue #20, Speed): requests per second through a real
 * MCP SDK 1.x round trip (a `Server` and a `Client` joined by the SDK's in-memory transport, the
 * server calling `createMessage`) with the handler as the client's sampling handler, against the
 * same round trip with a bare handler returning a fixed result, measured back to back in one run;
 * the CPU time per request of both (process.cpuUsage over the same interleaved rounds: the ratio
 * to read on a loaded machine) and the bytes allocated per request; the handler alone (its
 * `handle` called directly) in CPU time per request; and `fileStore` commits per second, one at
 * a time and 64 in flight (fdatasync'd, grouped).
 *
 * The in-memory transport delivers each message synchronously, so a round of requests runs as one
 * long chain of microtasks and the event loop never turns inside it; a stdio transport reads each
 * message in its own IO callback. The second pair of lines ("yielding") runs both round trips
 * over a transport that delivers each message in its own turn (`setImmediate`), as a client
 * reading a server's stdout meets it.
 *
 * The handler measured is the one `npm pack` ships: its sources bundled by esbuild as
 * scripts/build-handler.mjs does (bench-handler-built.ts), not run through tsx.
 *
 * The handler's requests are distinct (each its own identity, so each is hashed, evaluated,
 * consented to at once, sampled, committed to a memory store and audited to a callback) under a
 * policy without a rate limit, so every request takes the whole path.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { StoredDecision } from '../src/lib/machine/types';
import { builtHandler } from './bench-handler-built';
import {
  FIXED,
  allocPerRequest,
  benchPolicy,
  benchSample,
  sdkPair,
  small
} from './bench-handler-rig';

/** The handler as it ships (bench-handler-built.ts says why not the sources through tsx). */
const { createSamplingPolicy, fileStore, memoryStore } = await builtHandler();

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const load = () => `load ${loadavg()[0]!.toFixed(2)}`;

interface Run {
  /** Requests per second (wall clock). */
  rps: number;
  /** CPU µs (user + system) per request: this process's time only, which other load moves far less. */
  cpu: number;
  errors: number;
}

/** `n` round trips, `concurrency` in flight: wall-clock rate and CPU time per request. */
async function roundTrips(server: Server, n: number, concurrency: number): Promise<Run> {
  let next = 0;
  let errors = 0;
  const cpu = process.cpuUsage();
  const t = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < n) {
        try {
          await server.createMessage(small());
        } catch {
          errors++;
        }
      }
    })
  );
  const ms = performance.now() - t;
  const used = process.cpuUsage(cpu);
  return { rps: (n / ms) * 1000, cpu: (used.user + used.system) / n, errors };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

/**
 * CPU µs (user + system) per request through `conn.handle` directly, `concurrency` in flight.
 * `unseenSignal`: each request also makes an AbortSignal, as the SDK does for every request it
 * hands a handler, but the handler is not given it — what the signals alone cost the process.
 */
async function aloneCpu(
  conn: { handle: (request: never, extra: never) => Promise<unknown> },
  n: number,
  concurrency: number,
  unseenSignal = false
): Promise<number> {
  let next = 0;
  const before = process.cpuUsage();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const requestId = `direct-${next++}`;
        if (unseenSignal) void new AbortController().signal;
        await conn.handle(
          { method: 'sampling/createMessage', params: small() } as never,
          { requestId } as never
        );
      }
    })
  );
  const used = process.cpuUsage(before);
  return (used.user + used.system) / n;
}

async function commits(n: number, concurrency: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-file-store-'));
  const store = fileStore(dir);
  let next = 0;
  const decision = (i: number): StoredDecision => ({
    server: 'everything',
    identity: `everything:${i.toString(16).padStart(32, '0')}`,
    verdict: 'denied',
    reason: 'user.denied',
    retryable: false,
    decidedAt: i,
    expiresAt: null,
    policyHash: '0123456789abcdef',
    represented: 0,
    recent: []
  });
  const t = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await store.commit('c', decision(next++));
    })
  );
  const rate = (n / (performance.now() - t)) * 1000;
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  return rate;
}

/** A handler as the bench runs it: every request distinct, allowed, sampled, stored, audited. */
function benchLab() {
  const lab = createSamplingPolicy({
    policy: benchPolicy(),
    store: memoryStore(),
    audit: () => void lab.records++,
    consent: () => 'allow',
    sample: benchSample
  });
  return Object.assign(lab, { records: 0 });
}

/**
 * The policy's round trip against the bare one, over the in-memory transport or the yielding
 * one: two lines. Each with a handler of its own (a memory store holds at most
 * `limits.maxStoredDecisions` decisions, and every request here stores one).
 */
async function compare(yielding: boolean, N: number, C: number, ROUNDS: number) {
  const lab = benchLab();
  const conn = lab.connect('everything');
  const withHandler = await sdkPair((r, e) => conn.handle(r as never, e as never), yielding);
  const bare = await sdkPair(async () => FIXED, yielding);
  // Warm both paths, then alternate (bare, handler) round by round; each figure is the median of
  // its side's rounds. The CPU ratio (bare µs / handler µs per request: the rate ratio the
  // handler would reach on an idle machine) is the one to read on a loaded one.
  await roundTrips(bare.server, 2_000, C);
  await roundTrips(withHandler.server, 2_000, C);
  const bareRuns: Run[] = [];
  const handlerRuns: Run[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    bareRuns.push(await roundTrips(bare.server, N, C));
    handlerRuns.push(await roundTrips(withHandler.server, N, C));
  }
  const errors = handlerRuns.reduce((sum, r) => sum + r.errors, 0);
  const bareRps = median(bareRuns.map((r) => r.rps));
  const handlerRps = median(handlerRuns.map((r) => r.rps));
  const bareCpu = median(bareRuns.map((r) => r.cpu));
  const handlerCpu = median(handlerRuns.map((r) => r.cpu));
  const bareAlloc = await allocPerRequest(N, () => roundTrips(bare.server, N, C));
  const handlerAlloc = await allocPerRequest(N, () => roundTrips(withHandler.server, N, C));
  const how = yielding
    ? 'each message in its own turn, as over stdio'
    : 'in-memory, every message at once';
  console.log(
    `handler (SDK 1.x round trip, ${how}; small distinct requests, ${C} in flight, median of ${ROUNDS} interleaved rounds): ${fmt(handlerRps)} req/s with the policy vs ${fmt(bareRps)} req/s bare → ratio ${(handlerRps / bareRps).toFixed(2)} (goal ≥ 0.5; ${errors} errors, ${fmt(lab.records)} records)  [${load()}]`
  );
  console.log(
    `handler CPU${yielding ? ' (yielding)' : ''}: ${handlerCpu.toFixed(1)} µs per request with the policy vs ${bareCpu.toFixed(1)} µs bare → CPU ratio ${(bareCpu / handlerCpu).toFixed(2)} (goal ≥ 0.5); allocated ${kb(handlerAlloc.allocated)} vs ${kb(bareAlloc.allocated)}, promoted ${kb(handlerAlloc.promoted)} vs ${kb(bareAlloc.promoted)} per request`
  );
  await withHandler.close();
  await bare.close();
  await lab.close();
}

export async function benchHandler(): Promise<void> {
  const N = 10_000;
  const C = 16;
  const ROUNDS = 5;
  await compare(false, N, C, ROUNDS);
  await compare(true, N, C, ROUNDS);

  // The handler alone, called as the SDK would but without it: CPU time per request, which a
  // loaded machine disturbs far less than the wall-clock rates above (other processes' time is
  // not counted), so a change to the handler shows here first. Then the same with an AbortSignal
  // made per request and never handed over: on Node 20 each signal gets a hidden class of its
  // own (its prototype is set after it is made), which makes the young generation's collections
  // slow and promote — a cost of the SDK's per-request signal that no handler code can avoid.
  const lab = benchLab();
  const conn = lab.connect('everything');
  let cpuBest = Infinity;
  for (let round = 0; round < 3; round++)
    cpuBest = Math.min(cpuBest, await aloneCpu(conn, 5_000, C));
  const alone = await allocPerRequest(5_000, () => aloneCpu(conn, 5_000, C));
  let signalBest = Infinity;
  for (let round = 0; round < 3; round++)
    signalBest = Math.min(signalBest, await aloneCpu(conn, 5_000, C, true));
  const signalAlloc = await allocPerRequest(5_000, () => aloneCpu(conn, 5_000, C, true));
  console.log(
    `handler alone (no SDK, same requests, ${C} in flight): ${cpuBest.toFixed(1)} µs of CPU per request (best of 3), ${kb(alone.allocated)} allocated, ${kb(alone.promoted)} promoted per request; with an unseen AbortSignal made per request ${signalBest.toFixed(1)} µs, ${kb(signalAlloc.allocated)}, ${kb(signalAlloc.promoted)} promoted  [${load()}]`
  );
  await lab.close();

  const one = await commits(2_000, 1);
  const many = await commits(20_000, 64);
  console.log(
    `fileStore commits (fdatasync'd): ${fmt(one)} decisions/s one at a time, ${fmt(many)} decisions/s with 64 in flight (grouped; goal ≥ 2,000)  [${load()}]`
  );
}
