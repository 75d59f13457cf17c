// Import cycles among the modules under a folder (default src/lib/sim), specs left out.
// Value imports only: type-only imports are erased by TypeScript and cannot make a load-order
// cycle, so they are ignored unless --types is given. Exits 1 when a cycle is found.
// Usage: node scripts/import-cycles.mjs [folder] [--types]
import fs from 'node:fs';
import path from 'node:path';
const args = process.argv.slice(2);
const withTypes = args.includes('--types');
const ROOT = (args.find((a) => !a.startsWith('--')) ?? 'src/lib/sim').replace(/\/$/, '');
const files = [];
(function walk(d) {
  for (const e of fs.readdirSync(d, { withFileTypes: true })) {
    const p = path.join(d, e.name);
    if (e.isDirectory()) walk(p);
    else if (/\.ts$/.test(e.name) && !/\.spec\.ts$/.test(e.name)) files.push(p);
  }
})(ROOT);
const graph = new Map();
for (const f of files) {
  const src = fs.readFileSync(f, 'utf8');
  const deps = new Set();
  const re = /^\s*(import|export)\s+(type\s+)?([^'";]*?\s+from\s+)?['"]([^'"]+)['"]/gm;
  let m;
  while ((m = re.exec(src))) {
    // `import type` / `export type`, and `import { type A, type B }`, are erased by TypeScript
    if (!withTypes) {
      if (m[2]) continue;
      const named = /^\s*\{([^}]*)\}\s+from\s+$/.exec(m[3] ?? '');
      const parts = named
        ? named[1]
            .split(',')
            .map((p) => p.trim())
            .filter(Boolean)
        : [];
      if (parts.length && parts.every((p) => p.startsWith('type '))) continue;
    }
    const spec = m[4];
    let abs;
    if (spec.startsWith('.')) abs = path.resolve(path.dirname(f), spec);
    else if (spec.startsWith('$lib/')) abs = path.resolve('src/lib', spec.slice(5));
    else continue;
    for (const c of [abs, abs + '.ts', abs.replace(/\.js$/, '.ts'), abs + '/index.ts']) {
      if (fs.existsSync(c) && fs.statSync(c).isFile()) {
        deps.add(path.relative('.', c));
        break;
      }
    }
  }
  graph.set(
    path.relative('.', f),
    [...deps].filter((d) => d.startsWith(ROOT))
  );
}
// Tarjan's strongly connected components
let idx = 0;
const stack = [];
const on = new Set();
const ind = new Map();
const low = new Map();
const sccs = [];
function sc(v) {
  ind.set(v, idx);
  low.set(v, idx);
  idx++;
  stack.push(v);
  on.add(v);
  for (const w of graph.get(v) ?? []) {
    if (!ind.has(w)) {
      sc(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (on.has(w)) low.set(v, Math.min(low.get(v), ind.get(w)));
  }
  if (low.get(v) === ind.get(v)) {
    const comp = [];
    let w;
    do {
      w = stack.pop();
      on.delete(w);
      comp.push(w);
    } while (w !== v);
    if (comp.length > 1 || (graph.get(v) ?? []).includes(v)) sccs.push(comp);
  }
}
for (const v of graph.keys()) if (!ind.has(v)) sc(v);
console.log(`${graph.size} modules, ${sccs.length} cycle group(s)`);
for (const c of sccs) {
  console.log(
    '- ' +
      c
        .map((f) => f.replace(ROOT + '/', ''))
        .sort()
        .join(', ')
  );
  for (const a of c)
    for (const b of graph.get(a))
      if (c.includes(b))
        console.log(`    ${a.replace(ROOT + '/', '')} -> ${b.replace(ROOT + '/', '')}`);
}
process.exitCode = sccs.length ? 1 : 0;
