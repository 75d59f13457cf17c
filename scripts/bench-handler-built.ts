/**
 * The handler as it ships, for the benches: `src/lib/handler/index.ts` bundled by esbuild with
 * the options of scripts/build-handler.mjs into a folder under node_modules/.cache (its imports of
 * packages resolve from there, as an installed package's do), then imported. Why: the
 * benches run under tsx, which compiles each source with `keepNames` — a call that names every
 * function made at run time (`__name`, an Object.defineProperty), so a closure made per request
 * costs a third of a microsecond there and nothing in the shipped bundle.
 *
 * For an A/B comparison: `BENCH_HANDLER_ENTRY=<another tree>/src/lib/handler/index.ts` bundles
 * that tree's handler instead (say `git archive main src | tar -x -C /tmp/base`), and
 * `KEEP_BUNDLE=1` keeps the bundle, so that a `--cpu-prof` profile's lines can be read.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

type Handler = typeof import('../src/lib/handler/index');

export async function builtHandler(): Promise<Handler> {
  const cache = new URL('../node_modules/.cache/', import.meta.url).pathname;
  mkdirSync(cache, { recursive: true });
  const dir = mkdtempSync(join(cache, 'bench-handler-built-'));
  const outfile = join(dir, 'index.mjs');
  await build({
    entryPoints: [
      process.env.BENCH_HANDLER_ENTRY ??
        new URL('../src/lib/handler/index.ts', import.meta.url).pathname
    ],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    legalComments: 'none',
    logLevel: 'warning'
  });
  try {
    return (await import(pathToFileURL(outfile).href)) as Handler;
  } finally {
    if (!process.env.KEEP_BUNDLE) rmSync(dir, { recursive: true, force: true });
  }
}
