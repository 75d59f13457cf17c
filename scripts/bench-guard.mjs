// `npm run bench:guard -- [pairs] [hours] [scenario.json]`: what the run's invariant checks (the
// RunGuard, sim/checks/) cost per request. Bundles scripts/bench-profile.ts once and runs it
// unguarded and guarded (with the SDK frame validator) in alternating fresh processes, so both
// see the same machine load (the load average is printed with each pair); prints each pair and
// the medians. The scenario is run as written (`--as-written`). Default: 5 pairs of 0.5 h of
// bench/ui-50-servers.json, the live-play benchmark of issue #24.
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

const [pairs = '5', hours = '0.5', file = 'bench/ui-50-servers.json'] = process.argv.slice(2);
const dir = mkdtempSync(join(tmpdir(), 'bench-guard-'));
const bundle = join(dir, 'bench-profile.mjs');
execFileSync(
  'npx',
  [
    'esbuild',
    'scripts/bench-profile.ts',
    '--bundle',
    '--platform=node',
    '--format=esm',
    `--outfile=${bundle}`,
    '--log-level=error',
    "--banner:js=import { createRequire } from 'module'; const require = createRequire(import.meta.url);"
  ],
  { stdio: 'inherit' }
);

/** µs per request of one fresh run. */
function run(guarded) {
  const args = [bundle, hours, file, '--as-written', ...(guarded ? ['--guarded'] : [])];
  const out = execFileSync(process.execPath, args, { encoding: 'utf8' });
  const m = /\(([\d.]+) µs\/request\)/.exec(out);
  if (!m) throw new Error(`no figure in: ${out}`);
  return Number(m[1]);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const plain = [];
const guarded = [];
for (let i = 0; i < Number(pairs); i++) {
  const load = loadavg()[0].toFixed(2);
  plain.push(run(false));
  guarded.push(run(true));
  const over = guarded[i] - plain[i];
  console.log(
    `pair ${i + 1}: load ${load}  unguarded ${plain[i].toFixed(1)}  guarded ${guarded[i].toFixed(1)}  overhead ${over.toFixed(1)} µs/request`
  );
}
const overheads = guarded.map((g, i) => g - plain[i]);
console.log(
  `median: unguarded ${median(plain).toFixed(1)}  guarded ${median(guarded).toFixed(1)}  overhead ${median(overheads).toFixed(1)} µs/request (${file}, ${hours} h, ${pairs} pairs)`
);
