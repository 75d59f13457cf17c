/**
 * `node --expose-gc --import tsx scripts/bench-seek-parts.ts [SCENARIO.json] [--at=H] [--scrub=N]
 * [--durable]`: what an engine checkpoint holds, part by part (issue #21: a day's checkpoints of
 * the retry storm).
 *
 * Plays the run through a session to its end (or to `--at` hours), as the playground does, then
 * drops one part at a time from every engine checkpoint it took and reads the heap each drop frees
 * (after a full collection). A part reachable from another is counted with the last one dropped
 * of the two (the clock's entries go first: they point at servers and requests in flight), and a
 * part the checkpoints share (the checker's store lifetimes) is counted once for all of them —
 * the figures add up to what the checkpoints hold together. Figures, not assertions.
 */
import { readFileSync } from 'node:fs';
import { Session } from '../src/lib/sim/session/session';
import { loadParsers } from '../src/lib/sim/input/parsers';
import { LANE_IDS } from '../src/lib/sim/input/lanes';
import type { LaneId } from '../src/lib/sim/input/scenario';
import { estimateCopyBytes } from '../src/lib/sim/engine/engine-size';

await loadParsers();

const args = process.argv.slice(2);
const file = args.find((a) => !a.startsWith('--')) ?? 'bench/retry-storm.json';
const atH = Number(args.find((a) => a.startsWith('--at='))?.slice(5) ?? NaN);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run node with --expose-gc');

function heap(): number {
  gc!();
  gc!();
  return process.memoryUsage().heapUsed;
}

type Bag = Record<string, unknown>;
/** A field of an object, private or not (the parts are TypeScript `private`). */
const field = (o: unknown, k: string): Bag => (o as Bag)[k] as Bag;

const text = readFileSync(file, 'utf8');
const scenario = JSON.parse(text) as { start?: number; durationMs: number };
const session = new Session();
// `--durable`: the durable lane keeps its decisions in IndexedDB as in the browser (an in-memory
// IndexedDB here), one store per lane in a namespace of the run, as the page's worker attaches them.
if (args.includes('--durable')) {
  await import('fake-indexeddb/auto');
  const { CachedDurableStore } = await import('../src/lib/store/cached-durable-store');
  const stores = {} as Record<LaneId, InstanceType<typeof CachedDurableStore>>;
  for (const id of LANE_IDS) {
    const r = await CachedDurableStore.open({ dbName: 'bench-seek-parts', namespace: ['run', id] });
    if (!r.ok) throw new Error(r.error);
    stores[id] = r.store;
  }
  session.setStorage({
    run: 'run',
    durable: (l) => stores[l],
    durableError: null,
    audit: null,
    auditError: null
  });
}
session.handle({ type: 'load', scenario: JSON.parse(text) as unknown });
// The run's start, not its engine: an engine held here would keep what it shares with the
// checkpoints alive when they are dropped, and hide it from the figures.
const sim0 = { start: session.sim!.start };
const end = sim0.start + (Number.isFinite(atH) ? atH * 3_600_000 : scenario.durationMs);
session.handle({ type: 'seek', t: end });
// `--scrub=N`: then seek back as bench-seek.ts does (a quarter, a half, three quarters, then N
// arbitrary times), so the run is one restored from a checkpoint (or re-simulated) that shares
// less with them.
const scrub = Number(args.find((a) => a.startsWith('--scrub='))?.slice(8) ?? 0);
if (scrub > 0) {
  for (const q of [0.25, 0.5, 0.75]) {
    session.handle({ type: 'seek', t: end });
    session.handle({ type: 'seek', t: sim0.start + Math.round(q * (end - sim0.start)) - 1 });
  }
  let y = 987654;
  for (let i = 0; i < scrub; i++) {
    y = (Math.imul(y, 1103515245) + 12345) >>> 0;
    const t = sim0.start + Math.floor((y / 2 ** 32) * (end - sim0.start));
    if (t < session.sim!.now) session.handle({ type: 'seek', t });
  }
  console.log(
    `  then ${scrub} seeks: the run is at ${((session.sim!.now - sim0.start) / 3_600_000).toFixed(2)} h, ${session.copyRestores} restored from a checkpoint`
  );
}
const list = session.engineCheckpoints.list;
const n = list.length;
const estimated = list.reduce((s, c) => s + c.bytes, 0);
console.log(
  `${file}: played to ${((end - sim0.start) / 3_600_000).toFixed(1)} h, ${n} engine checkpoints, ` +
    `estimated ${(estimated / 2 ** 20).toFixed(1)} MiB (engine-size.ts)`
);
// What the parts count at the last checkpoint (how many things, for pricing them).
{
  const last = list.at(-1)!;
  for (const id of LANE_IDS) {
    const lane = last.sim.lanes[id];
    // A checkpoint's history is frozen (a flat list: checkpoint-memo.ts), a live one a map.
    const frozen = field(lane.host.presentations, 'frozen') as { times: number[][] } | null;
    const lists = frozen
      ? frozen.times
      : [...(field(lane.host.presentations, 'times') as unknown as Map<string, number[]>).values()];
    const pres = { size: lists.length };
    let times = 0;
    for (const t of lists) times += t.length;
    console.log(
      `  last checkpoint, lane ${id}: ${String(lane.host.store.count())} stored decisions, ` +
        `${pres.size} identities / ${times} presentation times, ${lane.inFlight.size} in flight, ` +
        `${lane.metrics.series.t.length} samples, ${lane.servers.size} servers`
    );
  }
  const life = field(field(last.guard, 'checker'), 'lifetimes');
  type State = { stored: unknown[]; dialogs: unknown[] };
  // A checkpoint's are a flat list of keys and states (checkpoint-memo.ts), a live tracker's a map.
  const flat = field(life, 'frozen') as unknown as (string | State)[] | null;
  const states = flat
    ? flat.filter((x): x is State => typeof x !== 'string')
    : [...(field(life, 'keys') as unknown as Map<string, State>).values()];
  const keys = { size: states.length };
  let spans = 0;
  for (const s of states) spans += s.stored.length + s.dialogs.length;
  console.log(
    `  last checkpoint, lifetimes: ${keys.size} keys, ${spans} spans; clock: ${
      (field(last.sim.clock, 'heap') as unknown as unknown[]).length
    } entries; estimate ${(estimateCopyBytes(last.sim, last.guard) / 2 ** 20).toFixed(2)} MiB`
  );
}

/** The parts, in the order they are dropped: each a name and what dropping it does to one checkpoint. */
const parts: [string, (c: (typeof list)[number]) => void][] = [
  [
    'clock entries',
    (c) => {
      field(c.sim, 'clock')['heap'] = [];
      field(c.sim, 'clock')['byId'] = new Map();
    }
  ],
  ['requests in flight', (c) => LANE_IDS.forEach((id) => c.sim.lanes[id].inFlight.clear())],
  ['servers', (c) => LANE_IDS.forEach((id) => c.sim.lanes[id].servers.clear())],
  [
    'stores (decisions, maps, expiry heaps)',
    (c) => LANE_IDS.forEach((id) => (field(c.sim.lanes[id], 'host')['store'] = null))
  ],
  [
    'presentation histories',
    (c) => LANE_IDS.forEach((id) => (field(c.sim.lanes[id], 'host')['presentations'] = null))
  ],
  [
    'metric series',
    (c) => LANE_IDS.forEach((id) => (field(c.sim.lanes[id], 'metrics')['series'] = null))
  ],
  [
    'metrics: edges, alerted identities',
    (c) =>
      LANE_IDS.forEach((id) => {
        field(c.sim.lanes[id], 'metrics')['edges'] = null;
        field(c.sim.lanes[id], 'metrics')['alerted'] = null;
      })
  ],
  [
    'checker: lifetimes',
    (c) => {
      const life = field(field(c.guard, 'checker'), 'lifetimes');
      life['keys'] = life['frozen'] = null;
    }
  ],
  ['checker: loops', (c) => (field(field(c.guard, 'checker'), 'loops')['times'] = null)],
  [
    'checker: the rest',
    (c) => {
      const ch = field(c.guard, 'checker');
      for (const k of Object.keys(ch)) if (k !== 'lifetimes' && k !== 'loops') ch[k] = null;
    }
  ],
  ['guard: the rest', (c) => ((c as Bag)['guard'] = null)],
  [
    'actions, marks, restarts',
    (c) => {
      const s = c.sim as unknown as Bag;
      s['actions'] = s['marks'] = s['restarts'] = null;
    }
  ],
  ['hosts: the rest', (c) => LANE_IDS.forEach((id) => ((c.sim.lanes[id] as Bag)['host'] = null))],
  ['engine: the rest', (c) => ((c as Bag)['sim'] = null)],
  // The copies the checkpoints share that the live run's values still key (checkpoint-memo.ts):
  // they go with the checkpoints.
  ['memo of shared copies', () => {}]
];

let before = heap();
let total = 0;
const rows: [string, number][] = [];
for (const [name, drop] of parts) {
  for (const c of list) drop(c);
  if (drop === parts.at(-1)![1]) session.engineCheckpoints.clear();
  const now = heap();
  rows.push([name, before - now]);
  total += before - now;
  before = now;
}
const MiB = (b: number) => (b / 2 ** 20).toFixed(2).padStart(7);
console.log(`  part                                     all ${n} (MiB)   each (MiB)   share`);
for (const [name, b] of rows)
  console.log(
    `  ${name.padEnd(40)} ${MiB(b)}        ${MiB(b / n)}   ${((100 * b) / total).toFixed(1).padStart(5)} %`
  );
console.log(`  ${'total'.padEnd(40)} ${MiB(total)}        ${MiB(total / n)}`);
