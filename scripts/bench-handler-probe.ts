/**
 * One side of the handler's bench (scripts/bench-handler.ts) alone in its process, to run under
 * `node --cpu-prof`, `--heap-prof` or `--trace-gc`: `n` requests through the SDK round trip with
 * the policy (`--mode=policy`), with a bare handler (`--mode=bare`), or through `conn.handle`
 * directly (`--mode=alone`; `--signal` makes each request an AbortSignal as the SDK does and passes
 * it, `--hide-signal` makes it but passes none). `--mode=bare-budget`: the bare handler returns the
 * policy's result with its budget block; `--mode=bare-garbage`: it allocates about what the
 * handler does and keeps none. `--yield` lets the event loop turn before each request is sent (the
 * transport still delivers at once; scripts/bench-handler.ts has the per-message one). `--built`:
 * the handler as it ships (bench-handler-built.ts). `--snapshot-at=K`: a heap snapshot as request
 * K is sent. Prints CPU µs, bytes allocated and bytes promoted per request, per round. A script
 * given to `node --import` may set `globalThis.__stopAlloc` (an allocation sampler's stop): it is
 * called at the end.
 *
 *   node --import tsx scripts/bench-handler-probe.ts --mode=policy --n=20000 [--yield] [--built]
 */
import { writeHeapSnapshot } from 'node:v8';
import { setImmediate as turn } from 'node:timers/promises';
import * as source from '../src/lib/handler/index';
import { builtHandler } from './bench-handler-built';
import {
  FIXED,
  allocPerRequest,
  benchPolicy,
  benchSample,
  made,
  sdkPair,
  small,
  type Handle
} from './bench-handler-rig';

const arg = (name: string, fallback: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const mode = arg('mode', 'policy');
const n = Number(arg('n', '20000'));
const rounds = Number(arg('rounds', '3'));
const concurrency = Number(arg('c', '16'));
const yielding = process.argv.includes('--yield');
const withSignal = process.argv.includes('--signal');
/** `--built`: the handler as `npm pack` ships it (one esbuild bundle), not the sources via tsx. */
const { createSamplingPolicy, memoryStore } = process.argv.includes('--built')
  ? await builtHandler()
  : source;
/** Make the signal but do not hand it to the handler. */
const hideSignal = process.argv.includes('--hide-signal');

const lab = createSamplingPolicy({
  policy: benchPolicy(),
  store: memoryStore(),
  audit: () => {},
  consent: () => 'allow',
  sample: benchSample
});
const conn = lab.connect('everything');
/** The policy's result for these requests: the bare handler's, with the lab's budget block. */
const budgeted = {
  ...FIXED,
  budget: {
    decision: {
      estimatedCost: { amount: '0.003009', currency: 'USD' },
      limitApplied: { amount: '0.0500', currency: 'USD' },
      limitSource: 'host_policy',
      meterBasis: 'example-model-v2@2026-07-01:in=3.00/Mtok,out=15.00/Mtok,cached=0.30/Mtok',
      estimatedTokens: { input: 3, output: 200 },
      requestHonored: true,
      actualCost: { amount: '0.000024', currency: 'USD' },
      actualTokens: { input: 3, output: 1 }
    }
  }
};
const handle: Handle =
  mode === 'bare'
    ? async () => FIXED
    : mode === 'bare-budget'
      ? async () => budgeted
      : mode === 'bare-garbage'
        ? async () => {
            // About what the handler allocates per request (~14 KB), none of it kept.
            let junk: unknown = null;
            for (let i = 0; i < 300; i++) junk = { i, junk, s: null };
            return junk ? FIXED : budgeted;
          }
        : (r, e) => conn.handle(r as never, e as never);

// `--yield` turns the loop before each request is sent; the transport itself delivers at once.
const { server, close } = await sdkPair(handle);

/** `--snapshot-at=K`: a heap snapshot as request K is sent (what is alive mid-round). */
const snapshotAt = Number(arg('snapshot-at', '0'));
async function one(): Promise<unknown> {
  if (made() + 1 === snapshotAt) console.log(writeHeapSnapshot('/tmp/probe.heapsnapshot'));
  if (mode !== 'alone') return server.createMessage(small());
  const requestId = `direct-${made()}`;
  const signal = withSignal ? new AbortController().signal : undefined;
  return conn.handle(
    { method: 'sampling/createMessage', params: small() } as never,
    { requestId, signal: hideSignal ? undefined : signal } as never
  );
}

async function run(count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < count) {
        if (yielding) await turn();
        await one();
      }
    })
  );
}

await run(2_000);
for (let r = 0; r < rounds; r++) {
  const cpu = process.cpuUsage();
  const alloc = await allocPerRequest(n, () => run(n));
  const used = process.cpuUsage(cpu);
  console.log(
    `${mode}${yielding ? ' yield' : ''}${withSignal ? ' signal' : ''}: ${((used.user + used.system) / n).toFixed(1)} µs CPU, ` +
      `${(alloc.allocated / 1024).toFixed(1)} KB allocated, ${(alloc.promoted / 1024).toFixed(2)} KB promoted per request; ` +
      `GC ${alloc.gcMs.toFixed(0)} ms in ${alloc.collections}`
  );
}
await (globalThis as { __stopAlloc?: () => Promise<void> }).__stopAlloc?.();
await close();
await lab.close();
