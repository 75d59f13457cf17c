// What the Node benches that time the engine in fresh processes share: a runner (a TypeScript
// file of scripts/) bundled once with esbuild into a temporary .mjs, so each run starts without
// a TypeScript loader.
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** `runner` (a path under the checkout at `root`) bundled as `name`.mjs in a fresh folder. */
export function bundleRunner(root, runner, name) {
  const out = join(mkdtempSync(join(tmpdir(), 'bench-run-')), `${name}.mjs`);
  execFileSync(
    'npx',
    [
      'esbuild',
      join(root, runner),
      '--bundle',
      '--platform=node',
      '--format=esm',
      `--outfile=${out}`,
      '--log-level=error',
      "--banner:js=import { createRequire } from 'module'; const require = createRequire(import.meta.url);"
    ],
    { stdio: 'inherit' }
  );
  return out;
}
