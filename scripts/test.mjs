// `npm test`: format check, lint, svelte-check, unit tests, then browser tests.
// The browser tests need a Chromium: found on the machine, or installed from Debian's packages
// when running as root with apt-get, or else we stop with a one-line instruction.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { findChromium } from './chromium.mjs';

function run(label, cmd, args) {
  console.log(`\n▶ ${label}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', env: process.env });
  if (r.status !== 0) {
    console.error(`✖ ${label} failed (exit ${r.status ?? r.signal})`);
    process.exit(r.status ?? 1);
  }
}

function ensureChromium() {
  if (findChromium()) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (isRoot && existsSync('/usr/bin/apt-get')) {
    console.log('\n▶ installing Debian chromium (no browser found)');
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
    spawnSync('apt-get', ['install', '-y', '-qq', 'chromium'], { stdio: 'inherit', env });
  }
  if (!findChromium()) {
    console.error(
      'No Chromium found: install one (Debian: `sudo apt-get install -y chromium`) or set CHROMIUM_PATH, then run `npm test` again.'
    );
    process.exit(1);
  }
}

const only = process.argv[2];
if (!only || only === 'static') {
  run('format check (prettier)', 'npx', ['prettier', '--check', '.']);
  run('lint (eslint)', 'npx', ['eslint', '.']);
  run('type check (svelte-check)', 'npm', ['run', '--silent', 'check']);
  run('import cycles (src/lib, value imports)', 'npm', ['run', '--silent', 'check:cycles']);
}
if (!only || only === 'unit') run('unit tests (vitest)', 'npx', ['vitest', 'run']);
if (!only || only === 'e2e') {
  ensureChromium();
  run('browser tests (playwright)', 'npx', ['playwright', 'test']);
}
