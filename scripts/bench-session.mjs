// `npm run bench:session -- [rounds] [hours] [scenario.json] [from]`: what the playground's worker adds
// to the guarded engine, per request, in Node (issue #24: live play's worker costs more a request
// than the engine with its invariant checks). Bundles scripts/bench-session-run.ts once and runs
// its three modes in alternating fresh processes — `engine` (the guarded engine alone), `session`
// (the Session in live play's batches, with its snapshots, checkpoints and breakpoint watcher)
// and `table` (the same, feeding the audit table's index) — printing the main thread's CPU µs a
// request of each (the best of the rounds: a shared machine only ever slows a run down) and the
// wall time. No browser: what is left between `table` and the browser's sim worker (bench:ui) is
// IndexedDB, the page's messages and the browser's own V8.
// `from`: hours played untimed first (the late day alone: `1 24 bench/ui-50-servers.json 20`).
// Default: 3 rounds of 4 simulated hours of bench/ui-50-servers.json.
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { bundleRunner } from './bench-bundle.mjs';

const [rounds = '3', hours = '4', file = 'bench/ui-50-servers.json', from = '0'] =
  process.argv.slice(2);
const js = bundleRunner('.', 'scripts/bench-session-run.ts', 'session');
const MODES = ['engine', 'session', 'table'];
const best = new Map(MODES.map((m) => [m, { mainUs: Infinity, wallMs: Infinity, requests: 0 }]));
for (let i = 0; i < Number(rounds); i++) {
  for (const mode of MODES) {
    const r = JSON.parse(
      execFileSync(process.execPath, [js, mode, hours, file, from], { encoding: 'utf8' })
    );
    const b = best.get(mode);
    b.mainUs = Math.min(b.mainUs, r.mainUs);
    b.wallMs = Math.min(b.wallMs, r.wallMs);
    b.requests = r.requests;
    console.log(
      `round ${i + 1} ${mode.padEnd(8)} ${r.mainUs.toFixed(1).padStart(5)} µs/request  [load ${loadavg()[0].toFixed(2)}]`
    );
  }
}
const engine = best.get('engine').mainUs;
console.log(`${file}, ${from} h to ${hours} h simulated, best of ${rounds}:`);
for (const mode of MODES) {
  const b = best.get(mode);
  console.log(
    `  ${mode.padEnd(8)} ${b.mainUs.toFixed(1).padStart(5)} µs/request (main thread)  +${(b.mainUs - engine).toFixed(1)} over the engine  wall ${(b.wallMs / 1000).toFixed(1)} s  ${b.requests.toLocaleString('en')} requests`
  );
}
