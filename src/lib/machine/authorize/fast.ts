/**
 * The authorisation machine, executed without actors: a transition table read from the machine's
 * own state nodes (the one definition — statechart, edge counts and path walk read the same),
 * run by a small interpreter with XState's semantics for the features this machine uses.
 *
 * Why: one XState actor per request (plus one invoked child actor per waiting state, a snapshot
 * clone per microstep) was half of a fast-forward's time. This interpreter keeps the same
 * observable order — every `after:` timer is set and cleared on the clock at the same point, every
 * invoked step starts and stops at the same point, events from steps queue exactly as in an
 * actor's mailbox — so a run gives byte-identical frames and audit records either way
 * (sim/executors.spec.ts runs both on every scenario and on fuzzed ones).
 *
 * Supported, checked when the table is built (anything else throws there, not mid-run): atomic
 * and final states under one root; `entry`, `always`, `on`, `after`, one `invoke` per state with
 * `onError`; named, parameterised and inline `assign` actions; named guards, `not(...)`; named
 * or numeric delays; a root-level `output`. State nodes are read, never modified.
 */
import type { AnyStateMachine } from 'xstate';
import { NotCloneable, revivable, type CloneMap } from '../clone';
import type { AuthContext, AuthEvent, AuthInput, AuthOutput } from './types';

/** An invoked step, as the host provides it: the same shape as `fromCallback`'s function. */
export type StepLogic = (args: {
  input: unknown;
  sendBack: (event: AuthEvent) => void;
}) => (() => void) | void;

/**
 * What the fast path needs of time: XState's Clock, and optionally reservations (the simulation's
 * virtual clock): a timer reserved now and inserted when the run rests orders exactly as one set
 * now, and one cancelled before that never touches the clock's heap.
 */
export interface StepClock {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(id: unknown): void;
  reserve?(ms: number): unknown;
  insert?(reservation: unknown, fn: () => void): unknown;
}

type Ev = { type: string; [k: string]: unknown };
type Ctx = AuthContext;
/* eslint-disable @typescript-eslint/no-explicit-any -- XState's state node internals are untyped here */
type Node = any;
type Def = any;

interface Action {
  kind: 'assign' | 'timer' | 'cancel';
  /** assign: the assignment (function or object of properties), and its params. */
  assignment?: unknown;
  params?: unknown;
  /** timer: the event it raises and its delay (a name or ms); cancel: the timer's event type. */
  event?: Ev;
  delay?: unknown;
}

interface Transition {
  guard: ((ctx: Ctx, ev: Ev) => boolean) | null;
  actions: Action[];
  /** The target state, or null for a targetless transition. */
  target: State | null;
}

interface State {
  name: string;
  final: boolean;
  entry: Action[];
  exit: Action[];
  invoke: { id: string; src: string; input: (ctx: Ctx, ev: Ev) => unknown } | null;
  on: Map<string, Transition[]>;
  always: Transition[];
}

/** The table for one machine: its states, its root's transitions, initial state and output. */
export interface MachineTable {
  readonly machine: AnyStateMachine;
  readonly initial: State;
  readonly rootOn: Map<string, Transition[]>;
  readonly output: (ctx: Ctx, ev: Ev) => AuthOutput;
  readonly context: (input: AuthInput) => Ctx;
  readonly delays: Record<string, unknown>;
}

function unsupported(what: string): never {
  throw new Error(`fast path: ${what} is not supported; extend machine/authorize/fast.ts`);
}

/** Read `machine` into a table. Throws on any feature the interpreter does not implement. */
export function buildTable(machine: AnyStateMachine): MachineTable {
  const impl = machine.implementations as {
    actions: Record<string, unknown>;
    guards: Record<string, unknown>;
    delays: Record<string, unknown>;
  };
  const root: Node = machine.root;
  const states = new Map<Node, State>();

  const guardOf = (g: unknown): ((ctx: Ctx, ev: Ev) => boolean) | null => {
    if (g === undefined) return null;
    if (typeof g === 'string' || (typeof g === 'object' && g !== null && 'type' in g)) {
      const name = typeof g === 'string' ? g : (g as { type: string }).type;
      const params = typeof g === 'string' ? undefined : (g as { params?: unknown }).params;
      if (typeof params === 'function') unsupported('dynamic guard params');
      const fn = impl.guards[name];
      if (typeof fn !== 'function') unsupported(`guard '${name}' (not implemented)`);
      if ('check' in fn) return guardOf(fn);
      const f = fn as (a: { context: Ctx; event: Ev }, p: unknown) => boolean;
      return (context, event) => f({ context, event }, params);
    }
    if (typeof g === 'function' && 'check' in g) {
      // XState's built-in combinators (`not`, `and`, `or`): their own check, given a snapshot
      // that carries the machine (for named guards inside them).
      const check = (g as { check: (...a: unknown[]) => boolean }).check;
      const snap = { machine };
      return (context, event) => check(snap, { context, event }, g);
    }
    if (typeof g === 'function') {
      const f = g as (a: { context: Ctx; event: Ev }) => boolean;
      return (context, event) => f({ context, event });
    }
    return unsupported(`guard ${String(g)}`);
  };

  const actionOf = (a: unknown): Action => {
    let fn: unknown = a;
    let params: unknown;
    if (typeof a === 'string' || (typeof a === 'object' && a !== null)) {
      const name = typeof a === 'string' ? a : (a as { type: string }).type;
      params = typeof a === 'string' ? undefined : (a as { params?: unknown }).params;
      if (typeof params === 'function') unsupported('dynamic action params');
      fn = impl.actions[name];
      if (fn === undefined) unsupported(`action '${name}' (not implemented)`);
    }
    const f = fn as { type?: string; assignment?: unknown; event?: unknown; delay?: unknown };
    if (f.type === 'xstate.assign') return { kind: 'assign', assignment: f.assignment, params };
    if (f.type === 'xstate.raise') {
      if (typeof f.event === 'function') unsupported('a raise with a computed event');
      if (f.delay === undefined) unsupported('a raise without delay');
      return { kind: 'timer', event: f.event as Ev, delay: f.delay };
    }
    if (f.type === 'xstate.cancel') {
      const id = (f as { sendId?: unknown }).sendId;
      if (typeof id !== 'string') unsupported('a cancel with a computed id');
      return { kind: 'cancel', event: { type: id } };
    }
    return unsupported(`action ${typeof a === 'string' ? a : JSON.stringify(a)}`);
  };

  const transitionOf = (t: Def): Transition => {
    if (t.reenter) unsupported('a reentering transition');
    const targets = (t.target ?? []) as Node[];
    if (targets.length > 1) unsupported('a transition with several targets');
    return {
      guard: guardOf(t.guard),
      actions: (t.actions as unknown[]).map(actionOf),
      // Filled in once every state exists.
      target: targets.length ? ({ node: targets[0] } as unknown as State) : null
    };
  };

  const mapOf = (node: Node): Map<string, Transition[]> => {
    const m = new Map<string, Transition[]>();
    for (const [type, list] of node.transitions as Map<string, Def[]>) {
      if (type.includes('*')) unsupported(`a wildcard event descriptor '${type}'`);
      m.set(type, list.map(transitionOf));
    }
    return m;
  };

  for (const [name, node] of Object.entries(root.states as Record<string, Node>)) {
    if (node.type !== 'atomic' && node.type !== 'final')
      unsupported(`${node.type} state '${name}'`);
    const invokes = node.invoke as Def[];
    if (invokes.length > 1) unsupported(`several invocations in '${name}'`);
    const inv = invokes[0];
    if (inv && (typeof inv.src !== 'string' || inv.onDone || inv.onSnapshot))
      unsupported(`invocation in '${name}'`);
    if (node.output !== undefined) unsupported(`output on state '${name}'`);
    const input = inv?.input;
    states.set(node, {
      name,
      final: node.type === 'final',
      entry: (node.entry as unknown[]).map(actionOf),
      exit: (node.exit as unknown[]).map(actionOf),
      invoke: inv
        ? {
            id: inv.id as string,
            src: inv.src as string,
            input:
              typeof input === 'function'
                ? (context, event) => input({ context, event, self: undefined })
                : () => input
          }
        : null,
      on: mapOf(node),
      always: ((node.always ?? []) as Def[]).map(transitionOf)
    });
  }
  const link = (ts: Iterable<Transition[]>) => {
    for (const list of ts)
      for (const t of list) {
        if (!t.target) continue;
        const s = states.get((t.target as unknown as { node: Node }).node);
        if (!s) unsupported('a transition to a state outside the root');
        t.target = s;
      }
  };
  for (const s of states.values()) {
    link(s.on.values());
    link([s.always]);
  }
  const rootOn = mapOf(root);
  link(rootOn.values());
  if ((root.entry as unknown[]).length || (root.exit as unknown[]).length)
    unsupported('root entry or exit actions');
  if ((root.invoke as unknown[]).length) unsupported('a root invocation');
  const initialTargets = root.initial?.target as Node[] | undefined;
  const initial = initialTargets?.length === 1 ? states.get(initialTargets[0]) : undefined;
  if (!initial) unsupported('a root without one initial state');
  if (root.initial.actions?.length) unsupported('initial actions');
  const outputFn = (machine.config as { output?: unknown }).output;
  if (typeof outputFn !== 'function') unsupported('a machine without an output function');
  const contextFn = (machine.config as { context?: unknown }).context;
  if (typeof contextFn !== 'function') unsupported('a machine without a context factory');
  return {
    machine,
    initial,
    rootOn,
    output: (context, event) =>
      (outputFn as (a: unknown) => AuthOutput)({ context, event, self: undefined }),
    context: (input) => (contextFn as (a: unknown) => Ctx)({ input, self: undefined }),
    delays: impl.delays
  };
}
/* eslint-enable @typescript-eslint/no-explicit-any */

/** What a run of one request reports, as an actor's observers would see it. */
export interface FastObserver {
  complete(output: AuthOutput): void;
  /** An action or guard threw: the context before the failing step (as the actor's snapshot). */
  error(error: unknown, context: Ctx | undefined): void;
}

interface Child {
  id: string;
  src: string;
  input: unknown;
  started: boolean;
  stopped: boolean;
  dispose: (() => void) | void;
}

const INIT: Ev = { type: 'xstate.init' };

/** The input of a run being copied (clone.ts): the copy is filled in, not started. */
const COPY = Symbol('copy');

/** A step's record in an engine copy: one copy, whichever closure asks for it first. */
function copyChild(m: CloneMap, child: Child): Child {
  if (m.has(child)) return m.registered(child);
  const c = m.set(child, { ...child, dispose: undefined });
  c.dispose = m.fn(child.dispose ?? undefined);
  return c;
}

/**
 * One request's run of the machine: `start()` it, `send()` it events; it reports through
 * `observer` when it reaches a final state or fails.
 */
export class FastRun {
  context: Ctx | undefined;
  state: State;
  status: 'active' | 'done' | 'error' = 'active';
  /** The invoked step of the current state. */
  #child: Child | null = null;
  /** Pending `after:` timers by their event type. */
  #timers = new Map<string, unknown>();
  /** Timers reserved on the clock, not yet inserted, by their event type (see `StepClock`). */
  #reserved = new Map<string, { reservation: unknown; event: Ev }>();
  /** Events waiting while a step runs (an actor's mailbox); closed until `start()`. */
  #queue: Ev[] = [];
  #busy = true;
  /** Side effects of a macrostep, run after it (XState's deferred actions). */
  #deferred: (() => void)[] = [];
  #initError: unknown = undefined;
  /**
   * True while `context` is a copy made in the current macrostep: later assignments of the same
   * macrostep write into it. Each macrostep's first assignment copies (XState's snapshots are
   * immutable), so a context read before it — an error's `before`, a host's `identity()` —
   * never changes under the reader; copying once per event rather than once per assignment
   * keeps a 30-key context from being cloned a dozen times per request.
   */
  #owned = false;

  constructor(
    private readonly table: MachineTable,
    private readonly steps: Readonly<Record<string, StepLogic>>,
    private readonly clock: StepClock,
    input: AuthInput | typeof COPY,
    private readonly observer: FastObserver
  ) {
    this.state = table.initial;
    if (input === COPY) return;
    try {
      this.context = table.context(input);
      this.#owned = true;
      this.#enter(table.initial, INIT);
      this.#settle(INIT);
    } catch (e) {
      // As createActor: the machine is in error before it starts; start() reports it.
      this.context = undefined;
      this.status = 'error';
      this.#initError = e;
      this.#deferred = [];
    }
  }

  /**
   * A copy of this run (clone.ts), at rest between events: same state, context, step and timers,
   * over the copies of its step logic (the host's), clock and observer.
   */
  clone(m: CloneMap): FastRun {
    if (this.#busy || this.#queue.length || this.#deferred.length || this.#reserved.size)
      throw new NotCloneable('a request is mid-step');
    const c = m.set(
      this,
      new FastRun(this.table, m.registered(this.steps), m.get(this.clock), COPY, {
        complete: m.fn(this.observer.complete),
        error: m.fn(this.observer.error)
      })
    );
    // Contexts are never changed in place (each macrostep copies before it assigns): shared —
    // but for the stored decision a lookup answered with, the store's live entry, whose count of
    // represented presentations the record reads at the end: the copy's store's entry, then.
    const ctx = this.context;
    c.context = ctx?.stored ? { ...ctx, stored: m.box(ctx.stored) } : ctx;
    c.state = this.state;
    c.status = this.status;
    c.#child = this.#child ? copyChild(m, this.#child) : null;
    c.#timers = new Map(this.#timers);
    c.#busy = false;
    c.#initError = this.#initError;
    c.#doneEvent = this.#doneEvent;
    return c;
  }

  /** As an actor's start: the resting state's step first, then the deferred timers, then events. */
  start(): void {
    if (this.status === 'error') {
      this.observer.error(this.#initError, undefined);
      return;
    }
    if (this.#child && this.status === 'active') this.#startChild(this.#child);
    this.#flush();
    this.#busy = false;
    if (this.status === 'done') this.#complete();
    else if (this.#queue.length > 0) this.#drain();
    this.#insertReserved();
  }

  send(event: AuthEvent | Ev): void {
    if (this.status !== 'active') return;
    this.#queue.push(event as Ev);
    if (!this.#busy) this.#drain();
  }

  #drain(): void {
    this.#busy = true;
    while (this.#queue.length > 0 && this.status === 'active') {
      const ev = this.#queue.shift()!;
      const before = this.context;
      this.#owned = false;
      try {
        this.#macrostep(ev);
      } catch (e) {
        this.#fail(e, before);
        return;
      }
      this.#flush();
      // The macrostep moved the status (TypeScript keeps the loop condition's narrowing).
      if ((this.status as FastRun['status']) === 'done') {
        this.#busy = false;
        this.#complete();
        this.#insertReserved();
        return;
      }
    }
    this.#busy = false;
    this.#insertReserved();
  }

  /** The run rests: the timers it reserved and did not cancel go onto the clock. */
  #insertReserved(): void {
    if (this.#busy || this.#reserved.size === 0) return;
    for (const [type, { reservation, event }] of this.#reserved)
      this.#timers.set(type, this.clock.insert!(reservation, this.#fire(event)));
    this.#reserved.clear();
  }

  #fire(event: Ev): () => void {
    return revivable(
      () => {
        this.#timers.delete(event.type);
        this.send(event);
      },
      (m) => m.get(this as FastRun).#fire(event)
    );
  }

  /** Run the deferred side effects of the last macrostep, in order. */
  #flush(): void {
    const deferred = this.#deferred;
    this.#deferred = [];
    try {
      for (const fn of deferred) fn();
    } catch (e) {
      this.#fail(e, this.context);
    }
  }

  #complete(): void {
    this.#queue.length = 0;
    this.observer.complete(this.table.output(this.context!, this.#doneEvent));
  }

  #doneEvent: Ev = { type: 'xstate.done.state' };

  #fail(e: unknown, before: Ctx | undefined): void {
    if (this.status === 'error') return;
    this.status = 'error';
    this.#deferred = [];
    this.#queue.length = 0;
    this.#busy = false;
    for (const id of this.#timers.values()) this.clock.clearTimeout(id);
    this.#timers.clear();
    this.#reserved.clear();
    if (this.#child) this.#stop(this.#child);
    this.observer.error(e, before);
  }

  #select(list: Transition[] | undefined, ev: Ev): Transition | null {
    if (!list) return null;
    for (const t of list) if (!t.guard || t.guard(this.context!, ev)) return t;
    return null;
  }

  #macrostep(ev: Ev): void {
    const t =
      this.#select(this.state.on.get(ev.type), ev) ??
      this.#select(this.table.rootOn.get(ev.type), ev);
    if (!t) return;
    this.#microstep(t, ev);
    this.#settle(ev);
  }

  /** Eventless transitions until the state rests (or is final). */
  #settle(ev: Ev): void {
    while (this.status === 'active') {
      const t = this.#select(this.state.always, ev);
      if (!t) return;
      this.#microstep(t, ev);
    }
  }

  #microstep(t: Transition, ev: Ev): void {
    if (!t.target) {
      this.#run(t.actions, ev);
      return;
    }
    const from = this.state;
    this.#run(from.exit, ev);
    const child = this.#child;
    if (from.invoke && child) {
      this.#child = null;
      // A step that never started is stopped at once; a running one after the macrostep.
      if (!child.started) child.stopped = true;
      else this.#deferred.push(() => this.#stop(child));
    }
    this.#run(t.actions, ev);
    this.#enter(t.target, ev);
  }

  #enter(s: State, ev: Ev): void {
    this.state = s;
    this.#run(s.entry, ev);
    if (s.invoke) {
      const child: Child = {
        id: s.invoke.id,
        src: s.invoke.src,
        input: s.invoke.input(this.context!, ev),
        started: false,
        stopped: false,
        dispose: undefined
      };
      this.#child = child;
      this.#deferred.push(() => this.#startChild(child));
    }
    if (s.final) {
      this.status = 'done';
      this.#doneEvent = { type: `xstate.done.state.${s.name}` };
    }
  }

  #startChild(child: Child): void {
    if (child.started || child.stopped) return;
    child.started = true;
    const logic = this.steps[child.src];
    try {
      if (!logic) throw new Error(`actor '${child.src}' was not provided`);
      child.dispose = logic({ input: child.input, sendBack: this.#sendBack(child) });
    } catch (error) {
      // As a child actor that failed to start: an error event for the invoke's onError edge.
      this.send({ type: `xstate.error.actor.${child.id}`, error, actorId: child.id });
    }
  }

  /** What a step sends its events through: nothing once it is stopped. */
  #sendBack(child: Child): (e: AuthEvent) => void {
    return revivable(
      (e: AuthEvent) => {
        if (!child.stopped) this.send(e);
      },
      (m) => m.get(this as FastRun).#sendBack(copyChild(m, child))
    );
  }

  #stop(child: Child): void {
    if (child.stopped) return;
    child.stopped = true;
    const d = child.dispose;
    child.dispose = undefined;
    if (typeof d === 'function') d();
  }

  #run(actions: readonly Action[], ev: Ev): void {
    for (const a of actions) {
      if (a.kind === 'assign') {
        const ctx = this.context!;
        const asg = a.assignment;
        const args = { context: ctx, event: ev };
        let partial: Record<string, unknown>;
        if (typeof asg === 'function') partial = asg(args, a.params) as Record<string, unknown>;
        else {
          partial = {};
          for (const k of Object.keys(asg as object)) {
            const v = (asg as Record<string, unknown>)[k];
            partial[k] =
              typeof v === 'function'
                ? (v as (x: unknown, p: unknown) => unknown)(args, a.params)
                : v;
          }
        }
        // As XState's assign: a new object with the partial's keys written over, in the same
        // key order. A spread of the whole context (then stores to existing keys), not
        // `Object.assign({}, ...)`: V8 copies a large object into an empty one far slower.
        let next = ctx;
        if (!this.#owned) {
          next = { ...ctx };
          this.#owned = true;
        }
        for (const k in partial) (next as unknown as Record<string, unknown>)[k] = partial[k];
        this.context = next;
      } else if (a.kind === 'timer') {
        const d = a.delay;
        const conf = typeof d === 'string' ? this.table.delays[d] : d;
        const ms =
          typeof conf === 'function'
            ? (conf as (x: unknown, p: unknown) => number)(
                { context: this.context, event: ev },
                undefined
              )
            : (conf as number);
        if (typeof ms !== 'number') unsupported(`delay '${String(d)}'`);
        const event = a.event!;
        this.#deferred.push(() => {
          if (this.clock.reserve && this.clock.insert)
            this.#reserved.set(event.type, { reservation: this.clock.reserve(ms), event });
          else this.#timers.set(event.type, this.clock.setTimeout(this.#fire(event), ms));
        });
      } else {
        const type = a.event!.type;
        this.#deferred.push(() => {
          if (this.#reserved.delete(type)) return;
          const id = this.#timers.get(type);
          if (id === undefined) return;
          this.#timers.delete(type);
          this.clock.clearTimeout(id);
        });
      }
    }
  }
}
