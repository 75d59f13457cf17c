// What each built JavaScript file holds, by source module (issue #24, first load): for every file
// named, its size gzipped (level 9, as bench:ui counts it) and, from its sourcemap, each source
// module's minified bytes with its share of the gzipped size (proportional to its bytes: gzip
// has no per-module size; `alone` is the module's bytes gzipped by themselves, an upper bound).
// Code no mapping names (Svelte's template strings, the bundler's glue) is "(unmapped)".
//
//   BUILD_SOURCEMAP=1 npm run build
//   node scripts/bundle-breakdown.mjs build/_app/immutable/workers/sim.worker-*.js [more files]
//
// `npm run bench:ui` names the files of the first load, largest first.
import { existsSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
// The sourcemap decoder Svelte's and SvelteKit's toolchain installs (magic-string's).
import { decode } from '@jridgewell/sourcemap-codec';

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: node scripts/bundle-breakdown.mjs <built .js file>…');
  process.exit(2);
}
const kb = (b) => (b / 1024).toFixed(1).padStart(6);
const gz = (s) => gzipSync(s, { level: 9 }).length;
// A module's path from the project or its package (sourcemaps name them relative to the file).
const shown = (src) => src.replace(/^(\.\.\/)+/, '').replace(/^.*node_modules\//, '');

for (const file of files) {
  const code = readFileSync(file, 'utf8');
  console.log(`${file}: ${kb(gz(code))} KB gzipped, ${kb(code.length)} KB minified`);
  if (!existsSync(`${file}.map`)) {
    console.log('  (no sourcemap: build with BUILD_SOURCEMAP=1)');
    continue;
  }
  const map = JSON.parse(readFileSync(`${file}.map`, 'utf8'));
  const lines = code.split('\n');
  /** The minified text of each source module, gathered from the segments mapped to it. */
  const text = new Map();
  decode(map.mappings).forEach((segments, line) => {
    const l = lines[line] ?? '';
    segments.forEach((s, i) => {
      const end = i + 1 < segments.length ? segments[i + 1][0] : l.length;
      const src = s.length > 1 ? shown(map.sources[s[1]]) : '(unmapped)';
      text.set(src, (text.get(src) ?? '') + l.slice(s[0], end));
    });
  });
  const ratio = gz(code) / Math.max(1, code.length);
  for (const [src, t] of [...text].sort((a, b) => b[1].length - a[1].length))
    console.log(
      `  ${kb(t.length)} KB min  ~${kb(t.length * ratio)} KB gz  (alone ${kb(gz(t))})  ${src}`
    );
}
