// `npm run fuzz [-- runs]`: the fuzz suites on a random seed, printed first, so a failure can be
// replayed with `FUZZ_SEED=<seed> npx vitest run <file>` and turned into a fixed-seed test. CI
// never runs this: `npm test` uses the one fixed seed in src/fuzz-setup.ts.
import { spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';

const seed = process.env.FUZZ_SEED ?? String(randomInt(1, 2 ** 31));
const runs = process.argv[2];
console.log(`FUZZ_SEED=${seed}${runs ? ` FUZZ_RUNS=${runs}` : ''}`);
const files = [
  'src/lib/sim/checks/fuzz-scenarios.spec.ts',
  'src/lib/sim/timeline/timetravel-fuzz.spec.ts',
  'src/lib/sim/input/input-fuzz.spec.ts'
];
const r = spawnSync('npx', ['vitest', 'run', ...files], {
  stdio: 'inherit',
  env: { ...process.env, FUZZ_SEED: seed, ...(runs ? { FUZZ_RUNS: runs } : {}) }
});
console.log(`FUZZ_SEED=${seed}: ${r.status === 0 ? 'passed' : 'FAILED — replay with this seed'}`);
process.exit(r.status ?? 1);
