import { describe, expect, it } from 'vitest';
import { createMachine } from 'xstate';
import { authorizationMachine } from '../machine/authorize';
import { STATECHART_BOX } from './statechart-box';
import { STATECHART_LAYOUT } from './statechart-drawing';
import { authorizationFlow } from '../machine/authorize/flow';
import { flowGraph } from './flow-graph';
import { layoutGraph, machineGraph, overlaps, place, type Rect } from './statechart-layout';

const graph = machineGraph(authorizationMachine);
const layout = layoutGraph(graph, {
  notes: { sent: 'one frame: result / -32003 / …', silenced: 'no frame (silence)' }
});

/** Every (source, target) pair the machine's definition declares, read independently. */
function declaredEdges(): Set<string> {
  const keys = new Set<string>();
  for (const [from, node] of Object.entries(authorizationMachine.root.states)) {
    const all = [...[...node.transitions.values()].flat(), ...(node.always ?? [])];
    for (const t of all) for (const target of t.target ?? []) keys.add(`${from}→${target.key}`);
  }
  return keys;
}

describe('machineGraph', () => {
  it('reads every state of the machine, the initial one and the final ones', () => {
    expect(graph.states.map((s) => s.id)).toEqual(Object.keys(authorizationMachine.root.states));
    expect(graph.initial).toBe('identifying');
    expect(graph.states.filter((s) => s.final).map((s) => s.id)).toEqual(['sent', 'silenced']);
    expect(graph.states.find((s) => s.id === 'lookingUp')?.description).toMatch(/decision store/);
  });

  it('reads every transition with a target: on, always and after', () => {
    expect(new Set(graph.edges.map((e) => e.key))).toEqual(declaredEdges());
    const byKey = new Map(graph.edges.map((e) => [e.key, e]));
    expect(byKey.get('lookingUp→replaying')?.triggers).toEqual(['store.hit [isDeniedHit]']);
    expect(byKey.get('consenting→denying')?.triggers).toEqual([
      'consent.answered',
      'after consentTimeout'
    ]);
    expect(byKey.get('identifying→lookingUp')?.triggers).toEqual(['always']);
    expect(byKey.get('calling→exhausting')?.descriptions[0]).toMatch(/cross the cap/);
  });

  it('leaves out transitions that change no state', () => {
    expect(graph.edges.some((e) => e.from === e.to)).toBe(false);
  });

  it('equals the graph the pages draw, read from the flow description without XState', () => {
    // Same states, same edges, same triggers and descriptions, in the same order (the layout
    // depends on it): the drawing cannot drift from the machine.
    expect(flowGraph(authorizationFlow)).toEqual(graph);
  });
});

describe('layoutGraph', () => {
  it('gives the drawing the size the playground holds for it before it arrives (statechart-box.ts)', () => {
    expect({ width: STATECHART_LAYOUT.width, height: STATECHART_LAYOUT.height }).toEqual(
      STATECHART_BOX
    );
  });

  it('contains every state and every transition with a target', () => {
    expect(layout.nodes.map((n) => n.id).sort()).toEqual(
      Object.keys(authorizationMachine.root.states).sort()
    );
    expect(new Set(layout.edges.map((e) => e.key))).toEqual(declaredEdges());
    for (const e of layout.edges) {
      expect(e.path).toMatch(/^M[\d.]+,[\d.]+( [CL][\d., ]+)+$/);
      expect(e.arrow).toMatch(/^M[\d.]+,[\d.]+ l/);
    }
  });

  it('puts the initial state on top and every target below its source', () => {
    const at = new Map(layout.nodes.map((n) => [n.id, n]));
    expect(at.get('identifying')!.layer).toBe(0);
    for (const e of layout.edges)
      expect(at.get(e.to)!.layer).toBeGreaterThan(at.get(e.from)!.layer);
    expect(at.get('sent')!.layer).toBe(at.get('silenced')!.layer);
  });

  it('never overlaps two boxes, two labels, or a label and a box', () => {
    const rects: (Rect & { id: string })[] = [
      ...layout.nodes,
      ...layout.edges.map((e) => ({ ...e.label, id: e.key }))
    ];
    const clashes: string[] = [];
    for (let i = 0; i < rects.length; i++)
      for (let j = i + 1; j < rects.length; j++)
        if (overlaps(rects[i]!, rects[j]!)) clashes.push(`${rects[i]!.id} × ${rects[j]!.id}`);
    expect(clashes).toEqual([]);
  });

  it('keeps everything inside its width and height', () => {
    const rects = [...layout.nodes, ...layout.edges.map((e) => e.label)];
    for (const r of rects) {
      expect(r.x).toBeGreaterThanOrEqual(0);
      expect(r.y).toBeGreaterThanOrEqual(0);
      expect(r.x + r.w).toBeLessThanOrEqual(layout.width);
      expect(r.y + r.h).toBeLessThanOrEqual(layout.height);
    }
    // A panel of about 700×300.
    expect(layout.width).toBeLessThan(760);
    expect(layout.height).toBeLessThan(380);
  });

  it('is deterministic', () => {
    expect(layoutGraph(machineGraph(authorizationMachine), { notes: {} })).toEqual(
      layoutGraph(machineGraph(authorizationMachine), { notes: {} })
    );
  });

  it('lays out any machine, back edges included', () => {
    const m = createMachine({
      initial: 'a',
      states: {
        a: { on: { go: 'b', skip: 'c' } },
        b: { on: { go: 'c', back: 'a' } },
        c: { type: 'final' }
      }
    });
    const l = layoutGraph(machineGraph(m));
    expect(l.nodes.map((n) => n.id)).toEqual(['a', 'b', 'c']);
    expect(l.edges.map((e) => e.key).sort()).toEqual(['a→b', 'a→c', 'b→a', 'b→c']);
    expect(l.layers).toEqual([['a'], ['b'], ['c']]);
    // a→b and its back edge b→a leave and enter at different ports: they never coincide.
    expect(new Set(l.edges.map((e) => e.path)).size).toBe(4);
    const back = l.edges.find((e) => e.key === 'b→a')!;
    const a = l.nodes.find((n) => n.id === 'a')!;
    expect(back.arrow).toContain(`,${a.y + a.h} l`);
  });
});

describe('place', () => {
  it('keeps desired positions when they are far enough apart', () => {
    expect(place([0, 50, 100], [1, 1, 1], [10, 10])).toEqual([0, 50, 100]);
  });

  it('pushes crowded items apart around their mean', () => {
    expect(place([10, 10], [1, 1], [20])).toEqual([0, 20]);
    const xs = place([0, 0, 0], [1, 1, 1], [10, 10]);
    expect(xs).toEqual([-10, 0, 10]);
  });
});
