// `node scripts/bench-profile-summary.mjs FILE.cpuprofile`: where a V8 CPU profile's self time
// went, grouped by area (XState runtime, GC, identity, invariants, metrics, clock, ...) and by
// the top functions. Figures for the speed notes, not assertions.
import { readFileSync } from 'node:fs';

const prof = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const self = new Map();
const dt = prof.timeDeltas;
for (let i = 0; i < prof.samples.length; i++)
  self.set(prof.samples[i], (self.get(prof.samples[i]) ?? 0) + (dt[i] ?? 0));
const total = [...self.values()].reduce((a, b) => a + b, 0);

/** The area a frame belongs to, from its script and function name. */
function area(cf) {
  const u = cf.url;
  const f = cf.functionName;
  if (f === '(garbage collector)') return 'GC';
  if (f === '(program)' || f === '(idle)' || f === '(root)') return 'V8 (program/idle)';
  if (u.includes('/xstate/')) return 'XState runtime';
  if (u.includes('@noble/hashes')) return 'identity: SHA-256';
  if (u.includes('canonicalize')) return 'identity: RFC 8785';
  if (u.includes('/zod/') || u.includes('@modelcontextprotocol')) return 'guard: SDK frame schemas';
  if (u.includes('machine/identity')) return 'identity: field selection';
  if (u.includes('sim/invariants') || u.includes('sim/guard') || u.includes('sim/lifetimes'))
    return 'invariants guard';
  if (u.includes('sim/metrics')) return 'metrics';
  if (u.includes('sim/clock')) return 'clock';
  if (u.includes('machine/authorize')) return 'machine actions/guards';
  if (u.includes('sim/client') || u.includes('sim/presentations')) return 'client host';
  if (u.includes('sim/servers') || u.includes('sim/provider') || u.includes('sim/user'))
    return 'servers/provider/user';
  if (u.includes('sim/engine')) return 'engine';
  if (u.includes('/store/') || u.includes('lane-store') || u.includes('store-tap'))
    return 'decision store';
  if (u.includes('machine/')) return 'policy/budget/frames';
  if (u.includes('node_modules')) return 'other libraries';
  if (u === '')
    return `V8 builtins (${f || 'anonymous'})`.startsWith('V8 builtins (JSON')
      ? 'JSON builtins'
      : 'V8 builtins';
  return 'other project code';
}

const areas = new Map();
const fns = new Map();
for (const [id, t] of self) {
  const n = byId.get(id);
  const a = area(n.callFrame);
  areas.set(a, (areas.get(a) ?? 0) + t);
  const short = n.callFrame.url.split('/').slice(-2).join('/');
  const k = `${n.callFrame.functionName || '(anonymous)'} ${short}:${n.callFrame.lineNumber + 1}`;
  fns.set(k, (fns.get(k) ?? 0) + t);
}
const pct = (t) => `${((t / total) * 100).toFixed(1).padStart(5)} %`;
console.log(`total ${(total / 1000).toFixed(0)} ms of samples`);
for (const [a, t] of [...areas].sort((x, y) => y[1] - x[1])) console.log(`${pct(t)}  ${a}`);
console.log('\ntop functions (self time):');
for (const [k, t] of [...fns].sort((x, y) => y[1] - x[1]).slice(0, 25))
  console.log(`${pct(t)}  ${k}`);
