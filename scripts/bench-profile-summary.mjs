// `node scripts/bench-profile-summary.mjs FILE.cpuprofile`: where a V8 CPU profile's self time
// went, grouped by area (XState runtime, GC, identity, machine, engine, clock, ...) and by the
// top functions. Figures for the speed notes, not assertions.
//
// A profile of an esbuild bundle (what `npm run bench:profile` makes) is mapped back to source
// modules through the `// path` comments esbuild writes at each module's start, so the functions
// are named by their source file, not by a line of the bundle.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const prof = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const self = new Map();
const dt = prof.timeDeltas;
for (let i = 0; i < prof.samples.length; i++)
  self.set(prof.samples[i], (self.get(prof.samples[i]) ?? 0) + (dt[i] ?? 0));
const total = [...self.values()].reduce((a, b) => a + b, 0);

/** For a bundle: the source module of each line, from esbuild's module comments. */
const bundles = new Map();
function moduleOf(url, line) {
  if (!url.endsWith('.mjs') || !url.startsWith('file://')) return url;
  let starts = bundles.get(url);
  if (!starts) {
    starts = [];
    const path = fileURLToPath(url);
    if (existsSync(path)) {
      const lines = readFileSync(path, 'utf8').split('\n');
      lines.forEach((l, i) => {
        const m = /^\/\/ (\S+\.(?:[cm]?js|ts))$/.exec(l);
        if (m) starts.push([i, m[1]]);
      });
    }
    bundles.set(url, starts);
  }
  let found = url;
  for (const [start, mod] of starts) {
    if (start > line) break;
    found = mod;
  }
  return found;
}

/** The area a frame belongs to, from its module and function name. */
function area(u, f) {
  if (f === '(garbage collector)') return 'GC';
  if (f === '(program)' || f === '(idle)' || f === '(root)') return 'V8 (program/idle)';
  if (u.includes('/xstate/') || u.includes('xstate/dist')) return 'XState runtime';
  if (u.includes('@noble/hashes') || u.includes('machine/sha256')) return 'identity: SHA-256';
  if (u.includes('canonicalize') || u.includes('machine/canonical')) return 'identity: RFC 8785';
  if (u.includes('/zod/') || u.includes('@modelcontextprotocol')) return 'guard: SDK frame schemas';
  if (u.includes('machine/identity')) return 'identity: field selection';
  if (
    u.includes('sim/checks/invariants') ||
    u.includes('sim/checks/guard') ||
    u.includes('sim/checks/lifetimes')
  )
    return 'invariants guard';
  if (u.includes('sim/engine/metrics')) return 'metrics';
  if (u.includes('sim/world/clock')) return 'clock';
  if (u.includes('authorize/fast')) return 'machine: table interpreter';
  if (u.includes('machine/authorize')) return 'machine: actions/guards/outcomes';
  if (u.includes('lib/client/')) return 'client host';
  if (
    u.includes('sim/actors/servers') ||
    u.includes('sim/actors/provider') ||
    u.includes('sim/actors/user')
  )
    return 'servers/provider/user';
  if (u.includes('sim/world/rng')) return 'seeded RNG';
  if (u.includes('sim/engine/engine')) return 'engine';
  if (u.includes('/store/') || u.includes('lane-store') || u.includes('store-tap'))
    return 'decision store';
  if (u.includes('machine/')) return 'policy/budget/frames/money';
  if (u.includes('node_modules')) return 'other libraries';
  if (u.startsWith('node:') || u.includes('internal/')) return 'Node internals (loading)';
  if (u === '') return f.startsWith('JSON') ? 'JSON builtins' : 'V8 builtins';
  return 'other project code';
}

const areas = new Map();
const fns = new Map();
for (const [id, t] of self) {
  const n = byId.get(id);
  const cf = n.callFrame;
  const mod = moduleOf(cf.url, cf.lineNumber);
  const a = area(mod, cf.functionName);
  areas.set(a, (areas.get(a) ?? 0) + t);
  const short = mod.split('/').slice(-2).join('/');
  const k = `${cf.functionName || '(anonymous)'} ${short}`;
  fns.set(k, (fns.get(k) ?? 0) + t);
}
const pct = (t) => `${((t / total) * 100).toFixed(1).padStart(5)} %`;
console.log(`total ${(total / 1000).toFixed(0)} ms of samples`);
for (const [a, t] of [...areas].sort((x, y) => y[1] - x[1])) console.log(`${pct(t)}  ${a}`);
console.log('\ntop functions (self time):');
for (const [k, t] of [...fns].sort((x, y) => y[1] - x[1]).slice(0, 30))
  console.log(`${pct(t)}  ${k}`);
