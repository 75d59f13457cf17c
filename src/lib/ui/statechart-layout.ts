/**
 * A statechart drawn from the machine's own definition: the graph is read from the flow
 * description (flow-graph.ts, what the pages draw) or from the XState state nodes
 * (`machineGraph`: their `on`, `always` and `after` transitions; a test checks the two agree),
 * then laid out top to bottom in layers (Sugiyama style): layers by longest path from the
 * initial state, long edges broken by dummy points, orderings within layers that reduce
 * crossings, positions that keep edges straight, and a place on every edge for its live count. Pure and deterministic: the same machine gives the same
 * picture, so the drawing never jumps while the counts change.
 *
 * Over 400 lines on purpose: the layout's phases (layers, dummies, ordering, positions, labels)
 * run in sequence over one graph representation that each phase extends.
 */
import type { AnyStateMachine } from 'xstate';

export interface GraphState {
  id: string;
  description: string | null;
  final: boolean;
}

export interface GraphEdge {
  /** `"from→to"`, the key the metrics count edges by. */
  key: string;
  from: string;
  to: string;
  /** What takes it: `store.hit [isDeniedHit]`, `always`, `after consentTimeout`. */
  triggers: string[];
  descriptions: string[];
}

export interface MachineGraph {
  initial: string;
  states: GraphState[];
  edges: GraphEdge[];
}

type StateNodeLike = AnyStateMachine['root'];
type TransitionLike = StateNodeLike['always'] extends (infer T)[] | undefined ? T : never;

function guardName(guard: unknown): string | null {
  if (!guard) return null;
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'object' && 'type' in guard) return String(guard.type);
  return 'guard';
}

/**
 * The machine's top-level states and every transition between them that has a target, merged by
 * (source, target). Targetless transitions (actions only, such as `provider.chunk` in `calling`)
 * change no state and are left out; so are self-transitions, which the metrics never count.
 */
export function machineGraph(machine: AnyStateMachine): MachineGraph {
  const root = machine.root;
  const nodes = Object.values(root.states) as StateNodeLike[];
  const edges = new Map<string, GraphEdge>();
  const add = (from: string, t: TransitionLike, trigger: string) => {
    for (const target of t.target ?? []) {
      if (target.key === from) continue;
      const key = `${from}→${target.key}`;
      const e = edges.get(key) ?? { key, from, to: target.key, triggers: [], descriptions: [] };
      const g = guardName(t.guard);
      const label = g ? `${trigger} [${g}]` : trigger;
      if (!e.triggers.includes(label)) e.triggers.push(label);
      if (t.description && !e.descriptions.includes(t.description))
        e.descriptions.push(t.description);
      edges.set(key, e);
    }
  };
  for (const node of nodes) {
    const delayed = new Map(node.after.map((a) => [a.eventType, `after ${String(a.delay)}`]));
    for (const [eventType, defs] of node.transitions) {
      for (const t of defs) add(node.key, t, delayed.get(eventType) ?? eventType);
    }
    for (const t of node.always ?? []) add(node.key, t, 'always');
  }
  const initial = root.initial?.target?.[0]?.key ?? nodes[0]?.key ?? '';
  return {
    initial,
    states: nodes.map((n) => ({
      id: n.key,
      description: n.description ?? null,
      final: n.type === 'final'
    })),
    edges: [...edges.values()]
  };
}

// ───────────────────────────── layout ─────────────────────────────

export interface LayoutOptions {
  /** State name font size; names are set in a monospace font so widths are predictable. */
  fontSize: number;
  noteFontSize: number;
  labelFontSize: number;
  /** Advance of one monospace character, in ems. */
  charEm: number;
  nodeHeight: number;
  padX: number;
  /** Least horizontal space between two boxes, and between lines passing through a layer. */
  gap: number;
  dummyGap: number;
  /** Width reserved for an edge's count label ("A35 B306"). */
  labelWidth: number;
  labelHeight: number;
  /** Least vertical space between layers. */
  band: number;
  margin: number;
  arrow: number;
  /** A second line of small text in a box: what a terminal state sends. */
  notes: Record<string, string>;
}

export const DEFAULT_LAYOUT: LayoutOptions = {
  fontSize: 11,
  noteFontSize: 9.5,
  labelFontSize: 9.5,
  charEm: 0.61,
  nodeHeight: 19,
  padX: 7,
  gap: 22,
  dummyGap: 7,
  labelWidth: 56,
  labelHeight: 11,
  band: 16,
  margin: 4,
  arrow: 5,
  notes: {}
};

export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface NodeBox extends Rect {
  id: string;
  layer: number;
  final: boolean;
  initial: boolean;
  description: string | null;
  note: string | null;
}

export interface EdgeRoute {
  key: string;
  from: string;
  to: string;
  triggers: string[];
  descriptions: string[];
  /** SVG path data, ending at the arrowhead's base. */
  path: string;
  /** Arrowhead triangle, SVG path data. */
  arrow: string;
  /** Where the count label goes (its centre is the label's anchor). */
  label: Rect;
}

export interface Layout {
  width: number;
  height: number;
  nodes: NodeBox[];
  edges: EdgeRoute[];
  /** State ids by layer, left to right (dummies left out). */
  layers: string[][];
}

interface Item {
  id: string;
  /** Index of the edge this dummy belongs to, or -1 for a state. */
  edge: number;
  w: number;
  layer: number;
  x: number;
  up: Item[];
  down: Item[];
}

/** Layers: longest path from the initial state, then each state pulled down next to its nearest successor. */
function assignLayers(graph: MachineGraph): Map<string, number> {
  const ids = graph.states.map((s) => s.id);
  const out = new Map(ids.map((id) => [id, [] as string[]]));
  for (const e of graph.edges) out.get(e.from)?.push(e.to);
  // Depth-first from the initial state (then any state it does not reach) drops back edges.
  const order: string[] = [];
  const mark = new Map<string, 1 | 2>();
  const dag = new Map(ids.map((id) => [id, [] as string[]]));
  const visit = (v: string) => {
    mark.set(v, 1);
    for (const w of out.get(v) ?? []) {
      if (mark.get(w) === 1) continue;
      dag.get(v)!.push(w);
      if (!mark.has(w)) visit(w);
    }
    mark.set(v, 2);
    order.push(v);
  };
  for (const id of [graph.initial, ...ids]) if (!mark.has(id)) visit(id);
  const topo = order.reverse();
  const layer = new Map(ids.map((id) => [id, 0]));
  for (const v of topo)
    for (const w of dag.get(v)!) layer.set(w, Math.max(layer.get(w)!, layer.get(v)! + 1));
  for (const v of [...topo].reverse()) {
    const succ = dag.get(v)!.map((w) => layer.get(w)!);
    if (succ.length) layer.set(v, Math.max(layer.get(v)!, Math.min(...succ) - 1));
  }
  return layer;
}

function crossings(layers: Item[][]): number {
  let n = 0;
  for (let l = 0; l + 1 < layers.length; l++) {
    const pos = new Map(layers[l + 1]!.map((it, i) => [it, i]));
    const pairs: [number, number][] = [];
    layers[l]!.forEach((it, i) => it.down.forEach((d) => pairs.push([i, pos.get(d)!])));
    for (let a = 0; a < pairs.length; a++)
      for (let b = a + 1; b < pairs.length; b++) {
        const [a0, a1] = pairs[a]!;
        const [b0, b1] = pairs[b]!;
        if ((a0 - b0) * (a1 - b1) < 0) n++;
      }
  }
  return n;
}

/** Barycentre sweeps down and up, then adjacent swaps; the ordering with fewest crossings wins. */
function order(layers: Item[][]): Item[][] {
  let best = layers.map((l) => [...l]);
  let bestCross = crossings(best);
  let cur = best.map((l) => [...l]);
  const sweep = (down: boolean) => {
    const range = [...cur.keys()];
    for (const l of down ? range.slice(1) : range.reverse().slice(1)) {
      const ref = cur[down ? l - 1 : l + 1]!;
      const pos = new Map(ref.map((it, i) => [it, i]));
      const layer = cur[l]!;
      const bary = new Map(
        layer.map((it, i) => {
          const ns = (down ? it.up : it.down).map((n) => pos.get(n)!);
          return [it, ns.length ? ns.reduce((a, b) => a + b, 0) / ns.length : i];
        })
      );
      layer.sort((a, b) => bary.get(a)! - bary.get(b)!);
    }
  };
  for (let i = 0; i < 12; i++) {
    sweep(i % 2 === 0);
    const c = crossings(cur);
    if (c < bestCross) [best, bestCross] = [cur.map((l) => [...l]), c];
  }
  cur = best;
  for (let improved = true; improved;) {
    improved = false;
    for (const layer of cur)
      for (let i = 0; i + 1 < layer.length; i++) {
        [layer[i], layer[i + 1]] = [layer[i + 1]!, layer[i]!];
        const c = crossings(cur);
        if (c < bestCross) [bestCross, improved] = [c, true];
        else [layer[i], layer[i + 1]] = [layer[i + 1]!, layer[i]!];
      }
  }
  return cur;
}

/**
 * Positions as close as possible to the desired ones (least squares, weighted) that keep the
 * order and the least separations: isotonic regression by pooling adjacent violators.
 */
export function place(desired: number[], weights: number[], seps: number[]): number[] {
  const offs = desired.map((_, i) => seps.slice(0, i).reduce((a, b) => a + b, 0));
  const blocks: { sum: number; w: number; n: number }[] = [];
  desired.forEach((d, i) => {
    const w = weights[i] ?? 1;
    blocks.push({ sum: (d - offs[i]!) * w, w, n: 1 });
    while (blocks.length > 1) {
      const b = blocks[blocks.length - 1]!;
      const a = blocks[blocks.length - 2]!;
      if (a.sum / a.w <= b.sum / b.w) break;
      blocks.splice(-2, 2, { sum: a.sum + b.sum, w: a.w + b.w, n: a.n + b.n });
    }
  });
  const out: number[] = [];
  for (const b of blocks) for (let k = 0; k < b.n; k++) out.push(b.sum / b.w + offs[out.length]!);
  return out;
}

function relax(layers: Item[][], opts: LayoutOptions) {
  const sep = (a: Item, b: Item) =>
    (a.w + b.w) / 2 + (a.edge >= 0 && b.edge >= 0 ? opts.dummyGap : opts.gap);
  for (const layer of layers) {
    let x = 0;
    layer.forEach((it, i) => {
      x += i ? sep(layer[i - 1]!, it) : 0;
      it.x = x;
    });
  }
  const mean = (xs: Item[]) => xs.reduce((a, n) => a + n.x, 0) / xs.length;
  const pass = (l: number, pick: (it: Item) => Item[]) => {
    const layer = layers[l]!;
    const desired = layer.map((it) => (pick(it).length ? mean(pick(it)) : it.x));
    const weights = layer.map((it) => (it.edge >= 0 ? 4 : 1));
    const seps = layer.slice(1).map((it, i) => sep(layer[i]!, it));
    place(desired, weights, seps).forEach((x, i) => (layer[i]!.x = x));
  };
  const idx = [...layers.keys()];
  for (let i = 0; i < 10; i++) {
    for (const l of idx.slice(1)) pass(l, (it) => it.up);
    for (const l of [...idx].reverse().slice(1)) pass(l, (it) => it.down);
  }
  for (const l of idx) pass(l, (it) => [...it.up, ...it.down]);
}

/** x of a vertical-tangent cubic from (x1, y1) to (x2, y2) at height y. */
function curveX(x1: number, y1: number, x2: number, y2: number, y: number): number {
  const ym = (y1 + y2) / 2;
  let lo = 0;
  let hi = 1;
  for (let i = 0; i < 30; i++) {
    const t = (lo + hi) / 2;
    const u = 1 - t;
    const yt = u * u * u * y1 + 3 * u * t * (u + t) * ym + t * t * t * y2;
    if (yt < y === y2 > y1) lo = t;
    else hi = t;
  }
  const s = 3 * lo * lo - 2 * lo * lo * lo;
  return x1 + (x2 - x1) * s;
}

const r1 = (n: number) => Math.round(n * 10) / 10;

/** Lay a machine graph out top to bottom. */
export function layoutGraph(graph: MachineGraph, options: Partial<LayoutOptions> = {}): Layout {
  const opts = { ...DEFAULT_LAYOUT, ...options };
  const cw = opts.fontSize * opts.charEm;
  const layerOf = assignLayers(graph);
  const depth = Math.max(0, ...layerOf.values()) + 1;
  const states = new Map(graph.states.map((s) => [s.id, s]));
  const noteW = (id: string) => (opts.notes[id]?.length ?? 0) * opts.noteFontSize * opts.charEm;
  const items = new Map<string, Item>(
    graph.states.map((s) => [
      s.id,
      {
        id: s.id,
        edge: -1,
        w: Math.ceil(s.id.length * cw + (opts.notes[s.id] ? 8 + noteW(s.id) : 0) + 2 * opts.padX),
        layer: layerOf.get(s.id)!,
        x: 0,
        up: [],
        down: []
      }
    ])
  );
  const layers: Item[][] = Array.from({ length: depth }, () => []);
  for (const it of items.values()) layers[it.layer]!.push(it);
  // Each edge as a chain of items, top to bottom; a back edge is laid out reversed.
  const chains = graph.edges
    .filter((e) => states.has(e.from) && states.has(e.to))
    .map((e, ei) => {
      const reversed = layerOf.get(e.to)! <= layerOf.get(e.from)!;
      const top = items.get(reversed ? e.to : e.from)!;
      const bottom = items.get(reversed ? e.from : e.to)!;
      const chain = [top];
      for (let l = top.layer + 1; l < bottom.layer; l++) {
        const d: Item = { id: `${e.key}#${l}`, edge: ei, w: 2, layer: l, x: 0, up: [], down: [] };
        layers[l]!.push(d);
        chain.push(d);
      }
      chain.push(bottom);
      for (let i = 1; i < chain.length; i++) {
        if (chain[i]!.layer === chain[i - 1]!.layer) continue;
        chain[i - 1]!.down.push(chain[i]!);
        chain[i]!.up.push(chain[i - 1]!);
      }
      return { edge: e, chain, reversed };
    });
  const ordered = order(layers);
  relax(ordered, opts);

  const rowH = ordered.map(() => opts.nodeHeight);

  // Ports: the edges leaving (entering) a box spread along its bottom (top), ordered by where
  // their other end lies, so edges between the same two states do not coincide.
  const ports = new Map<string, number>();
  for (const it of items.values()) {
    const ends: Record<'a' | 'b', { key: string; x: number; ci: number }[]> = { a: [], b: [] };
    chains.forEach(({ chain }, ci) => {
      const k = chain.indexOf(it);
      if (k < 0) return;
      if (chain[k + 1]) ends.a.push({ key: `${ci}:${k}:a`, x: chain[k + 1]!.x, ci });
      if (chain[k - 1]) ends.b.push({ key: `${ci}:${k - 1}:b`, x: chain[k - 1]!.x, ci });
    });
    for (const list of [ends.a, ends.b]) {
      list.sort((p, q) => p.x - q.x || p.ci - q.ci);
      const span = Math.min(it.w - 2 * opts.padX, (list.length - 1) * 10);
      list.forEach((e, i) =>
        ports.set(e.key, list.length > 1 ? it.x - span / 2 + (span * i) / (list.length - 1) : it.x)
      );
    }
  }
  // One segment per band an edge crosses: from a box's bottom port (or a dummy) to the next top port.
  const segsOf = chains.map(({ chain }, ci) =>
    chain.slice(1).map((b, i) => {
      const a = chain[i]!;
      return {
        band: a.layer,
        ax: ports.get(`${ci}:${i}:a`) ?? a.x,
        bx: ports.get(`${ci}:${i}:b`) ?? b.x
      };
    })
  );

  // Count labels: each on its edge — on the curve in a row of a band the edge crosses, or beside
  // a layer where a long edge passes through — clear of boxes and of every other label. A band
  // gets another row of labels when a label finds no room.
  const labelW = opts.labelWidth;
  const lh = opts.labelHeight + 1;
  const bandH = (rows: number) => Math.max(opts.band, 2 + rows * lh + opts.arrow + 2);
  const rows = Array.from({ length: depth }, () => 1);
  const queue = [...chains.keys()].sort((a, b) => segsOf[a]!.length - segsOf[b]!.length || a - b);
  const realItems = [...items.values()];
  let rowY: number[] = [];
  let placed: Rect[] = [];
  for (let attempt = 0; ; attempt++) {
    rowY = [];
    let y = opts.margin;
    for (let l = 0; l < depth; l++) {
      rowY.push(y);
      y += rowH[l]! + (l + 1 < depth ? bandH(rows[l]!) : 0);
    }
    const boxes = realItems.map((it) => ({
      x: it.x - it.w / 2 - 3,
      y: rowY[it.layer]!,
      w: it.w + 6,
      h: rowH[it.layer]!
    }));
    const anchors = (ci: number) => {
      const out: [number, number][] = [];
      for (const g of segsOf[ci]!) {
        const y1 = rowY[g.band]! + rowH[g.band]!;
        const y2 = rowY[g.band + 1]!;
        for (let r = 0; r < rows[g.band]!; r++) {
          const cy = y1 + 2 + (r + 0.5) * lh;
          out.push([curveX(g.ax, y1, g.bx, y2, cy), cy]);
        }
      }
      for (const it of chains[ci]!.chain.slice(1, -1))
        out.push([it.x, rowY[it.layer]! + rowH[it.layer]! / 2]);
      return out;
    };
    placed = [];
    const taken: Rect[] = [];
    let stuck = -1;
    for (const ci of queue) {
      let best: Rect | null = null;
      let fallback: Rect | null = null;
      for (const [cx, cy] of anchors(ci)) {
        for (const nudge of [0, -8, 8, -16, 16, -24, 24]) {
          const rect = {
            x: cx + nudge - labelW / 2,
            y: cy - opts.labelHeight / 2,
            w: labelW,
            h: opts.labelHeight
          };
          fallback ??= rect;
          const padded = { x: rect.x - 2, y: rect.y, w: rect.w + 4, h: rect.h };
          if ([...boxes, ...taken].every((p) => !overlaps(padded, p))) {
            best = rect;
            break;
          }
        }
        if (best) break;
      }
      if (!best) {
        if (stuck < 0) stuck = ci;
        best = fallback!;
      }
      placed[ci] = best;
      taken.push(best);
    }
    if (stuck < 0 || attempt > 4 * depth) break;
    const bands = segsOf[stuck]!.map((g) => g.band);
    const grow = bands.reduce((m, b) => (rows[b]! < rows[m]! ? b : m), bands[0]!);
    rows[grow]!++;
  }

  const edges: EdgeRoute[] = chains.map(({ edge, reversed }, ci) => {
    const segs = segsOf[ci]!.map((g) => ({
      ...g,
      ay: rowY[g.band]! + rowH[g.band]!,
      by: rowY[g.band + 1]!
    }));
    const first = segs[0]!;
    const last = segs[segs.length - 1]!;
    // The arrowhead sits at the real target: the bottom box, or the top one for a back edge.
    const s = opts.arrow;
    const arrow = reversed
      ? `M${r1(first.ax)},${r1(first.ay)} l${0.8 * s},${s} h${-1.6 * s} Z`
      : `M${r1(last.bx)},${r1(last.by)} l${-0.8 * s},${-s} h${1.6 * s} Z`;
    let d = '';
    segs.forEach((g, i) => {
      const ay = i === 0 && reversed ? g.ay + s : g.ay;
      const by = i === segs.length - 1 && !reversed ? g.by - s : g.by;
      const ym = (ay + by) / 2;
      d += i === 0 ? `M${r1(g.ax)},${r1(ay)}` : ` L${r1(g.ax)},${r1(ay)}`;
      d += ` C${r1(g.ax)},${r1(ym)} ${r1(g.bx)},${r1(ym)} ${r1(g.bx)},${r1(by)}`;
    });
    const label = placed[ci]!;
    return {
      key: edge.key,
      from: edge.from,
      to: edge.to,
      triggers: edge.triggers,
      descriptions: edge.descriptions,
      path: d,
      arrow,
      label
    };
  });
  const height = rowY[depth - 1]! + rowH[depth - 1]! + opts.margin;
  const boxOf = (it: Item) => ({
    x: it.x - it.w / 2,
    y: rowY[it.layer]!,
    w: it.w,
    h: rowH[it.layer]!
  });

  // Shift everything so the leftmost thing sits at the margin.
  const boxes = graph.states.map((s) => ({ s, it: items.get(s.id)! }));
  const lefts = [
    ...boxes.map(({ it }) => boxOf(it).x),
    ...edges.map((e) => e.label.x),
    ...ordered.flat().map((it) => it.x - 2)
  ];
  const rights = [
    ...boxes.map(({ it }) => boxOf(it).x + it.w),
    ...edges.map((e) => e.label.x + e.label.w),
    ...ordered.flat().map((it) => it.x + 2)
  ];
  const dx = opts.margin - Math.min(...lefts);
  const nodes: NodeBox[] = boxes.map(({ s, it }) => {
    const b = boxOf(it);
    return {
      id: s.id,
      x: r1(b.x + dx),
      y: b.y,
      w: b.w,
      h: b.h,
      layer: it.layer,
      final: s.final,
      initial: s.id === graph.initial,
      description: s.description,
      note: opts.notes[s.id] ?? null
    };
  });
  for (const e of edges) {
    e.label.x = r1(e.label.x + dx);
    e.label.y = r1(e.label.y);
    e.path = shiftPath(e.path, dx);
    e.arrow = shiftPath(e.arrow, dx);
  }
  return {
    width: Math.ceil(Math.max(...rights) + dx + opts.margin),
    height: Math.ceil(height),
    nodes,
    edges,
    layers: ordered.map((l) => l.filter((it) => it.edge < 0).map((it) => it.id))
  };
}

/** Move the absolute x coordinates of a path made of M, C and L commands (relative l, h stay). */
function shiftPath(d: string, dx: number): string {
  return d.replace(/([MCL ])(-?[\d.]+),(-?[\d.]+)/g, (_, c: string, x: string, y: string) => {
    return `${c}${r1(Number(x) + dx)},${y}`;
  });
}

/** Do two rectangles overlap (touching edges do not count)? */
export function overlaps(a: Rect, b: Rect): boolean {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}
