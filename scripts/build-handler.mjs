/**
 * Builds `sampling-policy-lab/handler` (issue #20): the handler and the lab code it runs (machine,
 * stores, the host) as one ES module for Node ≥ 20, `dist/handler/index.js`, with its runtime
 * dependencies (zod, canonicalize) left as imports (no XState: the handler runs
 * the flow's transition table, machine/authorize/fast.ts), and its type
 * declarations as one file, `dist/handler/index.d.ts`. esbuild bundles (so the output needs no
 * rewriting of the sources' extensionless imports); dts-bundle-generator rolls the declarations up
 * through the TypeScript compiler with tsconfig.handler.json. `npm run build:handler`; `npm pack`
 * runs it (prepack).
 */
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { build } from 'esbuild';

const out = 'dist/handler';
rmSync(out, { recursive: true, force: true });

const result = await build({
  entryPoints: ['src/lib/handler/index.ts'],
  outfile: `${out}/index.js`,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  metafile: true,
  legalComments: 'none',
  logLevel: 'warning'
});
// The handler ships without page code: fail the build if any found its way in.
const page = Object.keys(result.metafile.inputs).filter((f) =>
  /(^|\/)(routes|ui)\/|\.svelte|svelte|monaco|uplot|lz-string|idb-keyval/.test(f)
);
if (page.length > 0) throw new Error(`the handler bundle imports page code: ${page.join(', ')}`);

const require = createRequire(import.meta.url);
execFileSync(
  process.execPath,
  [
    require.resolve('dts-bundle-generator/dist/bin/dts-bundle-generator.js'),
    '--silent',
    '--project',
    'tsconfig.handler.json',
    '--no-banner',
    '--export-referenced-types=false',
    '-o',
    `${out}/index.d.ts`,
    'src/lib/handler/index.ts'
  ],
  { stdio: 'inherit' }
);
console.log(`built ${out}/index.js and ${out}/index.d.ts`);
