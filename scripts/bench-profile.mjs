// `npm run bench:profile -- [hours] [scenario.json] [--guarded] [--as-written] [--memo-off]`: bundle
// scripts/bench-profile.ts with esbuild (so the profile maps back to source modules), run it
// under `node --cpu-prof`, and summarise the profile (scripts/bench-profile-summary.mjs).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'bench-profile-'));
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
execFileSync(
  process.execPath,
  ['--cpu-prof', `--cpu-prof-dir=${dir}`, bundle, ...process.argv.slice(2)],
  { stdio: 'inherit' }
);
const prof = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
console.log(`profile: ${join(dir, prof)}`);
execFileSync(process.execPath, ['scripts/bench-profile-summary.mjs', join(dir, prof)], {
  stdio: 'inherit'
});
