/**
 * The authorisation machine's graph (states, transitions, what takes each, their descriptions),
 * read from the flow description (machine/authorize/flow.ts) — the data both executors read — so
 * the statechart is drawn without the XState runtime or the machine built from it (issues #21 and
 * #24). statechart-layout.spec.ts checks it equals `machineGraph` of the XState machine, so the two
 * cannot drift.
 *
 * It names triggers as XState does: a state's event transitions in their order, then its
 * invoked step's error (`xstate.error.actor.<step>`), then its delays (`after <delay>`), then its
 * eventless ones (`always`); a guard in brackets, a negated one as `[guard]`.
 */
import {
  errorEventType,
  type Flow,
  type FlowTransition,
  type GuardRef
} from '../machine/authorize/flow';
import type { GraphEdge, MachineGraph } from './statechart-layout';

/** XState names a `not(...)` guard by no name: the drawing says what the machine says. */
const guardLabel = (g: GuardRef | undefined): string | null =>
  g === undefined ? null : typeof g === 'string' ? g : 'guard';

/**
 * The flow's states and every transition between two of them, merged by (source, target).
 * Targetless transitions change no state and are left out; so are self-transitions, which the
 * metrics never count, and the root's own transitions (a cancel from any state), which the
 * machine's graph does not draw either.
 */
export function flowGraph(flow: Flow): MachineGraph {
  const edges = new Map<string, GraphEdge>();
  const add = (from: string, t: FlowTransition, trigger: string) => {
    if (!t.target || t.target === from) return;
    const key = `${from}→${t.target}`;
    const e = edges.get(key) ?? { key, from, to: t.target, triggers: [], descriptions: [] };
    const g = guardLabel(t.guard);
    const label = g ? `${trigger} [${g}]` : trigger;
    if (!e.triggers.includes(label)) e.triggers.push(label);
    if (t.description && !e.descriptions.includes(t.description))
      e.descriptions.push(t.description);
    edges.set(key, e);
  };
  const entries = Object.entries(flow.states);
  for (const [name, s] of entries) {
    for (const [event, ts] of Object.entries(s.on ?? {}))
      for (const t of ts ?? []) add(name, t, event);
    if (s.invoke) for (const t of s.invoke.onError) add(name, t, errorEventType(s.invoke.src));
    for (const [delay, ts] of Object.entries(s.after ?? {}))
      for (const t of ts ?? []) add(name, t, `after ${delay}`);
    for (const t of s.always ?? []) add(name, t, 'always');
  }
  return {
    initial: flow.initial,
    states: entries.map(([id, s]) => ({
      id,
      description: s.description ?? null,
      final: s.type === 'final'
    })),
    edges: [...edges.values()]
  };
}
