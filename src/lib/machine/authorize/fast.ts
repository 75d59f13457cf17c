/**
 * The authorisation flow (flow.ts), executed without actors: a transition table read from the
 * typed flow description — the same one machine.ts builds the XState machine from — run by a
 * small interpreter with XState's semantics for the features the flow format has.
 *
 * Why: one XState actor per request (plus one invoked child actor per waiting state, a snapshot
 * clone per microstep) was half of a fast-forward's time. This interpreter keeps the same
 * observable order — every `after:` timer is set and cleared on the clock at the same point, every
 * invoked step starts and stops at the same point, events from steps queue exactly as in an
 * actor's mailbox — so a run gives byte-identical frames and audit records either way
 * (sim/engine/executors.spec.ts runs both on every scenario and on fuzzed ones).
 *
 * XState's semantics, as this interpreter reproduces them: a state's `after` delays are timers
 * set after its entry actions and cleared after its exit actions, in the order they are written,
 * each raising an event named `xstate.after.<delay>.<machine>.<state>`; an invoked step starts
 * after the entry actions (and the timers) and stops after the exit actions; a step that throws
 * on start sends `xstate.error.actor.<src>`; side effects (timers, steps) run after the macrostep
 * that caused them; a state's own transitions are tried before the root's.
 *
 * One module past 400 lines on purpose: the table, the interpreter and its context handling
 * (first context, copy-on-write, the undo log an error's context comes from) keep one set of
 * invariants — XState's order and snapshots — that are read and changed together.
 */
import type { AnyStateMachine } from 'xstate';
import { copyable, type CloneMap, type FieldRule } from '../clone';
import {
  afterEventType,
  errorEventType,
  flowOf,
  type ActionRef,
  type DelayName,
  type Flow,
  type FlowEvent,
  type FlowState,
  type FlowTransition,
  type GuardRef,
  type StateName,
  type StepName,
  reducers as flowReducers
} from './flow';
import { EMPTY_GEN } from './outcomes';
import type { AuthContext, AuthEvent, AuthInput, AuthOutput } from './types';

/**
 * Where a step sends its events: the run's record of that step (it passes them on while the
 * step is live). An object, not a callback: what a step hands it to (a dialog, a stream, a
 * flight's waiters) may outlive the event that started it, and a copy of the run copies it.
 */
export interface StepPort {
  send(event: AuthEvent): void;
}

/** What stops a step that waits (a lookup, a dialog, a model call, a commit). */
export interface StepStop {
  stop(): void;
}

/** What an invoked step is given: its input, and where it sends its events. */
export interface StepArgs {
  input: unknown;
  port: StepPort;
}

/**
 * An invoked step, as the host provides it: `fromCallback`'s function with the callback an
 * object (`port`) and the cleanup an object (the actor executor wraps both for XState).
 */
export type StepLogic = (args: StepArgs) => StepStop | void;

/**
 * Where a run finds its invoked steps, by their `src` name: methods of this object, called on it
 * — the client host's own (client/host.ts), so a copy of the run calls the copy of its host — or
 * a record of functions (a test's).
 */
export type StepSource = Readonly<Partial<Record<StepName, StepLogic>>>;

/** What a timer set as data calls (client/driver.ts `TimerTarget`): the run itself. */
interface TimerTarget {
  timerFired(arg: unknown): void;
}

/**
 * What the fast path needs of time: timers as data (`setTimer`: the run and the event it raises),
 * and optionally reservations (the simulation's virtual clock): a timer reserved now and inserted
 * when the run rests orders exactly as one set now, and one cancelled before that never touches
 * the clock's heap.
 */
export interface StepClock {
  setTimer(ms: number, target: TimerTarget, arg: unknown): unknown;
  clearTimeout(id: unknown): void;
  reserve?(ms: number): unknown;
  insertTimer?(reservation: unknown, target: TimerTarget, arg: unknown): unknown;
}

type Ev = { type: string; [k: string]: unknown };
type Ctx = AuthContext;
type Reducer = (ctx: Ctx, ev: Ev, params: unknown) => Partial<Ctx>;

type Action =
  | { kind: 'assign'; reduce: Reducer; params: unknown }
  /**
   * The flow's own `stamp`, `enter` and `trace` reducers, run inline (`FastRun._run`): three of
   * every state's or event's actions, each of which would return a one-key object (and `trace` a
   * copy of the whole path) only for the executor to copy that key over.
   */
  | { kind: 'stamp' }
  | { kind: 'enter' }
  | { kind: 'trace'; state: string }
  /** A state's `after` delay: the event it raises, and its length. */
  | { kind: 'timer'; event: Ev; delay: (ctx: Ctx) => number }
  /** The timer of that event type, cleared. */
  | { kind: 'cancel'; type: string };

interface Transition {
  guard: ((ctx: Ctx, ev: Ev) => boolean) | null;
  actions: Action[];
  /** The target state, or null for a targetless transition. */
  target: State | null;
}

interface State {
  name: string;
  final: boolean;
  /** A final state's done event (made once: the output reads the context, not the event). */
  done: Ev | null;
  entry: Action[];
  exit: Action[];
  invoke: { id: string; src: string; input: (ctx: Ctx, ev: Ev) => unknown } | null;
  on: Map<string, Transition[]>;
  always: Transition[];
}

/** The table for one flow: its states, its root's transitions, initial state and output. */
export interface MachineTable {
  readonly flow: Flow;
  readonly initial: State;
  readonly rootOn: Map<string, Transition[]>;
  readonly output: (ctx: Ctx, ev: Ev) => AuthOutput;
  readonly context: (input: AuthInput) => Ctx;
  /**
   * Whether `firstContext` gives what the flow's own `context` gives (checked once, when the table
   * is read): then a run builds its first context directly.
   */
  readonly direct: boolean;
}

function unsupported(what: string): never {
  throw new Error(`fast path: ${what} is not supported; extend machine/authorize/fast.ts`);
}

/**
 * The table of the flow `machine` was built from (machine.ts). A machine built some other way
 * is refused, naming the first feature of its definition the flow format does not have.
 */
export function buildTable(machine: AnyStateMachine): MachineTable {
  const flow = flowOf(machine);
  if (!flow) {
    // The definition as written (XState's public `config`), only to say what is missing.
    const states = (machine.config.states ?? {}) as Record<
      string,
      { type?: string; states?: unknown }
    >;
    for (const [name, s] of Object.entries(states)) {
      if (s.type !== undefined && s.type !== 'atomic' && s.type !== 'final')
        unsupported(`${s.type} state '${name}'`);
      if (s.states) unsupported(`compound state '${name}'`);
    }
    unsupported('a machine not built from a flow description (machine/authorize/flow.ts)');
  }
  return tableOf(flow);
}

/** Read a flow description into a table. */
export function tableOf(flow: Flow): MachineTable {
  const guardOf = (g: GuardRef | undefined): ((ctx: Ctx, ev: Ev) => boolean) | null => {
    if (g === undefined) return null;
    const name = typeof g === 'string' ? g : g.not;
    const f = flow.guards[name] as (ctx: Ctx, ev: FlowEvent) => boolean;
    if (typeof f !== 'function') unsupported(`guard '${name}' (not implemented)`);
    return typeof g === 'string' ? f : (ctx, ev) => !f(ctx, ev);
  };

  const actionOf = (a: ActionRef): Action => {
    const name = typeof a === 'string' ? a : a.type;
    const params = typeof a === 'string' ? undefined : a.params;
    const reduce = flow.reducers[name] as unknown as Reducer;
    if (typeof reduce !== 'function') unsupported(`action '${name}' (not implemented)`);
    // Inline only the reducers this file knows (by identity): a flow with its own keeps them.
    const own = flowReducers as unknown as Record<string, Reducer>;
    if (reduce === own.stamp) return { kind: 'stamp' };
    if (reduce === own.enter) return { kind: 'enter' };
    if (reduce === own.trace && typeof (params as { state?: unknown })?.state === 'string')
      return { kind: 'trace', state: (params as { state: string }).state };
    return { kind: 'assign', reduce, params };
  };

  const states = new Map<StateName, State>();
  const pending: { t: Transition; target: StateName }[] = [];
  const transitionOf = (t: FlowTransition): Transition => {
    const out: Transition = {
      guard: guardOf(t.guard),
      actions: (t.actions ?? []).map(actionOf),
      // Filled in once every state exists.
      target: null
    };
    if (t.target) pending.push({ t: out, target: t.target });
    return out;
  };
  const onOf = (on: FlowState['on']): Map<string, Transition[]> => {
    const m = new Map<string, Transition[]>();
    for (const [type, list] of Object.entries(on ?? {}))
      m.set(type, (list ?? []).map(transitionOf));
    return m;
  };

  for (const [name, s] of Object.entries(flow.states) as [StateName, FlowState][]) {
    if (s.type !== undefined && s.type !== 'final')
      unsupported(`${String(s.type)} state '${name}'`);
    const entry = s.entry.map(actionOf);
    const exit: Action[] = [];
    const on = onOf(s.on);
    const inv = s.invoke;
    if (inv) on.set(errorEventType(inv.src), inv.onError.map(transitionOf));
    for (const [delay, list] of Object.entries(s.after ?? {}) as [
      DelayName,
      readonly FlowTransition[]
    ][]) {
      const type = afterEventType(flow, delay, name);
      entry.push({ kind: 'timer', event: { type }, delay: flow.delays[delay] });
      exit.push({ kind: 'cancel', type });
      on.set(type, list.map(transitionOf));
    }
    states.set(name, {
      name,
      final: s.type === 'final',
      done: s.type === 'final' ? { type: `xstate.done.state.${name}` } : null,
      entry,
      exit,
      invoke: inv
        ? {
            id: inv.src,
            src: inv.src,
            input: (context) => (inv.input as (c: Ctx) => unknown)(context)
          }
        : null,
      on,
      always: (s.always ?? []).map(transitionOf)
    });
  }
  const rootOn = onOf(flow.on);
  for (const { t, target } of pending) {
    const s = states.get(target);
    if (!s) unsupported(`a transition to '${target}', a state the flow does not have`);
    t.target = s;
  }
  const initial = states.get(flow.initial);
  if (!initial) unsupported(`an initial state '${flow.initial}' the flow does not have`);
  return {
    flow,
    initial,
    rootOn,
    output: (context) => flow.output(context),
    context: (input) => flow.context(input),
    direct: firstContextMatches(flow)
  };
}

/** What a run of one request reports, as an actor's observers would see it. */
export interface FastObserver {
  complete(output: AuthOutput): void;
  /** An action or guard threw: the context before the failing step (as the actor's snapshot). */
  error(error: unknown, context: Ctx | undefined): void;
}

/**
 * The invoked step of a state, and the port it sends its events through: nothing once it is
 * stopped.
 */
class Child implements StepPort {
  started = false;
  stopped = false;
  dispose: StepStop | void = undefined;
  constructor(
    public run: FastRun,
    readonly id: string,
    readonly src: string,
    readonly input: unknown
  ) {}

  send(e: AuthEvent): void {
    if (!this.stopped) this.run.send(e);
  }
}
// Copied in the copy of its run, with the copy of what stops it (the host's); its input shared.
copyable(Child, { name: 'fast.Child', fields: { input: 'shared' } });

const INIT: Ev = { type: 'xstate.init' };
/** A run's done event before it is done (one object for every run). */
const NOT_DONE: Ev = { type: 'xstate.done.state' };

/**
 * The context's keys in the order `flow.context` writes them (AuthInput's, then the flow's own),
 * without and with the optional `lane`.
 */
const CONTEXT_KEYS = [
  'request',
  'config',
  'policyHash',
  'cards',
  'identity',
  'at',
  'enteredAt',
  'stored',
  'joined',
  'waitingForFlight',
  'replayed',
  'alert',
  'evaluation',
  'consent',
  'gen',
  'denial',
  'outcome',
  'frame',
  'toStore',
  'verdict',
  'budgetDecision',
  'costMicros',
  'failure',
  'storeError',
  'audit',
  'path'
] as const satisfies readonly (keyof Ctx)[];
const LANE_AT = CONTEXT_KEYS.indexOf('cards') + 1;

/** 0: not the flow's own shape (copied by spread); 1: its shape; 2: its shape with `lane`. */
type Shape = 0 | 1 | 2;

/** 1 when `input` has exactly AuthInput's keys in their order, 2 with `lane` too, else 0. */
function inputShape(input: AuthInput): Shape {
  let i = 0;
  let lane = false;
  for (const k in input) {
    if (i === LANE_AT && k === 'lane' && !lane) {
      lane = true;
      continue;
    }
    if (i >= LANE_AT || CONTEXT_KEYS[i] !== k) return 0;
    i++;
  }
  if (i !== LANE_AT) return 0;
  return lane ? 2 : 1;
}

/**
 * The authorisation flow's first context (flow.ts, `context`), written here as one literal.
 * Why two: the flow builds it with `Object.assign({}, input, {...})`, which V8 turns into a
 * dictionary-mode object — several microseconds per request, and every read of it slow — while
 * a literal is one allocation with a stable map. How they are kept equal: `firstContextMatches`
 * compares the two on probe inputs when a table is read, and a table whose flow's context differs
 * (flow.ts changed its fields or their first values) never uses this one; fast-context.spec.ts
 * compares them over generated inputs and fails if the table stops using it.
 */
function firstContext(input: AuthInput, shape: 1 | 2): Ctx {
  const at = input.request.receivedAt;
  // Two literals (without and with `lane`), so that the context is one allocation of the map
  // `copyContext` gives its copies.
  if (shape === 2)
    return {
      request: input.request,
      config: input.config,
      policyHash: input.policyHash,
      cards: input.cards,
      lane: input.lane,
      identity: '',
      at,
      enteredAt: at,
      stored: null,
      joined: false,
      waitingForFlight: false,
      replayed: false,
      alert: false,
      evaluation: null,
      consent: 'not-asked' as const,
      gen: { ...EMPTY_GEN },
      denial: null,
      outcome: null,
      frame: null,
      toStore: null,
      verdict: null,
      budgetDecision: null,
      costMicros: 0,
      failure: null,
      storeError: null,
      audit: null,
      path: []
    } satisfies Record<keyof Ctx, unknown>;
  return {
    request: input.request,
    config: input.config,
    policyHash: input.policyHash,
    cards: input.cards,
    identity: '',
    at,
    enteredAt: at,
    stored: null,
    joined: false,
    waitingForFlight: false,
    replayed: false,
    alert: false,
    evaluation: null,
    consent: 'not-asked' as const,
    gen: { ...EMPTY_GEN },
    denial: null,
    outcome: null,
    frame: null,
    toStore: null,
    verdict: null,
    budgetDecision: null,
    costMicros: 0,
    failure: null,
    storeError: null,
    audit: null,
    path: []
  } satisfies Record<Exclude<keyof Ctx, 'lane'>, unknown>;
}

/** Same keys in the same order, and equal values (JSON-equal objects, each made afresh). */
function sameContext(a: Ctx, b: Ctx): boolean {
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i]!;
    if (k !== kb[i]) return false;
    const x = (a as unknown as Record<string, unknown>)[k];
    const y = (b as unknown as Record<string, unknown>)[k];
    if (Object.is(x, y)) continue;
    if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return false;
    if (JSON.stringify(x) !== JSON.stringify(y)) return false;
  }
  return true;
}

/**
 * Whether `firstContext` builds what `flow.context` builds, on probe inputs with and without a
 * lane: the input's members are passed through as they are, so distinct probe objects show it.
 */
export function firstContextMatches(flow: Flow): boolean {
  for (const lane of [undefined, 'probe-lane']) {
    const input: AuthInput = {
      request: {
        id: 'probe',
        server: 'probe',
        connection: 'probe#1',
        params: { messages: [], maxTokens: 1 },
        receivedAt: 1_234_567
      },
      config: Object.freeze({}) as AuthInput['config'],
      policyHash: 'probe-hash',
      cards: Object.freeze({}),
      ...(lane ? { lane } : {})
    };
    const shape = inputShape(input);
    if (shape === 0) return false;
    try {
      if (!sameContext(flow.context(input), firstContext(input, shape))) return false;
    } catch {
      return false;
    }
  }
  return true;
}

/** A run's first context: built directly when the table allows it, else by the flow. */
export function startContext(table: MachineTable, input: AuthInput): { ctx: Ctx; shape: Shape } {
  const shape = table.direct ? inputShape(input) : 0;
  if (shape !== 0) return { ctx: firstContext(input, shape), shape };
  return { ctx: table.context(input), shape: 0 };
}

/**
 * A copy of a context of the flow's own shape, as `{ ...ctx }` makes it — the same keys in the
 * same order, the same values — but written as one literal. Why: the flow's first context is
 * built by `Object.assign` (a dictionary-mode object), each copy's map differs as fields change
 * type, and a spread site that sees many maps goes megamorphic: V8 then copies key by key,
 * growing the copy's property array as it goes — about a kilobyte per copy, seven copies per
 * request, at thousands of requests a second. A literal is one allocation with one stable map.
 * A run whose first context was built by `firstContext` has the shape; a reducer that adds a key
 * turns it off (_run).
 */
function copyContext(c: Ctx, shape: 1 | 2): Ctx {
  if (shape === 2)
    return {
      request: c.request,
      config: c.config,
      policyHash: c.policyHash,
      cards: c.cards,
      lane: c.lane,
      identity: c.identity,
      at: c.at,
      enteredAt: c.enteredAt,
      stored: c.stored,
      joined: c.joined,
      waitingForFlight: c.waitingForFlight,
      replayed: c.replayed,
      alert: c.alert,
      evaluation: c.evaluation,
      consent: c.consent,
      gen: c.gen,
      denial: c.denial,
      outcome: c.outcome,
      frame: c.frame,
      toStore: c.toStore,
      verdict: c.verdict,
      budgetDecision: c.budgetDecision,
      costMicros: c.costMicros,
      failure: c.failure,
      storeError: c.storeError,
      audit: c.audit,
      path: c.path
    } satisfies Record<keyof Ctx, unknown>;
  return {
    request: c.request,
    config: c.config,
    policyHash: c.policyHash,
    cards: c.cards,
    identity: c.identity,
    at: c.at,
    enteredAt: c.enteredAt,
    stored: c.stored,
    joined: c.joined,
    waitingForFlight: c.waitingForFlight,
    replayed: c.replayed,
    alert: c.alert,
    evaluation: c.evaluation,
    consent: c.consent,
    gen: c.gen,
    denial: c.denial,
    outcome: c.outcome,
    frame: c.frame,
    toStore: c.toStore,
    verdict: c.verdict,
    budgetDecision: c.budgetDecision,
    costMicros: c.costMicros,
    failure: c.failure,
    storeError: c.storeError,
    audit: c.audit,
    path: c.path
  } satisfies Record<Exclude<keyof Ctx, 'lane'>, unknown>;
}

/** The deferred side effects (`FastRun.deferred`). */
const START_CHILD = 0;
const STOP_CHILD = 1;
const SET_TIMER = 2;
const CANCEL_TIMER = 3;
type Effect = typeof START_CHILD | typeof STOP_CHILD | typeof SET_TIMER | typeof CANCEL_TIMER;

/** The input of a run's blank copy (clone.ts): its fields are copied in; it is not started. */
const COPY = Symbol('copy');

/** In the undo log (`FastRun.undo`): the key was not in the context before it was written. */
const ABSENT = Symbol('absent');

/**
 * The lists a run fills and empties as it goes (`deferred`, `spare`, `undo`), left by runs that
 * are done, for the next runs to take: each grew to a few dozen slots in its run, two or three
 * times over — a request's largest garbage after its context — and a run that starts with grown
 * lists grows none. A run empties each as it goes (`flush`, `clearUndo`): nothing of it stays.
 */
const SCRATCH: unknown[][] = [];
const SCRATCH_KEPT = 96;
/** What a done run holds in place of its lists: nothing may be written into them. */
const DONE_LIST: unknown[] = Object.freeze([]) as unknown as unknown[];

function scratch(): unknown[] {
  return SCRATCH.pop() ?? [];
}

/** Keep `list` for the next run: a done run's lists hold nothing (each is emptied as it goes). */
function recycle(list: unknown[]): void {
  if (list !== DONE_LIST && SCRATCH.length < SCRATCH_KEPT) SCRATCH.push(list);
}

/**
 * One request's run of the machine: `start()` it, `send()` it events; it reports through
 * `observer` when it reaches a final state or fails.
 */
export class FastRun implements TimerTarget {
  context: Ctx | undefined;
  state: State;
  status: 'active' | 'done' | 'error' = 'active';
  /** The invoked step of the current state. */
  private child: Child | null = null;
  /**
   * Pending `after:` timers: flat (event type, clock id) pairs in the order set, `tn` slots in
   * use — a Map's semantics (a type set again keeps its place) for the one or two a waiting
   * state has, without a Map per run and the rehash a Map does as it empties (see `rn`). Made
   * with room for two (a literal of unused slots): an empty array's first write grows it a store
   * for sixteen.
   */
  private timers: unknown[] = [undefined, undefined, undefined, undefined];
  private tn = 0;
  /**
   * Timers reserved on the clock, not yet inserted (see `StepClock`): flat (event type,
   * reservation, event) triples in the order reserved. A waiting state has one or two; most are
   * cancelled in the same turn (a step that answers at once), so a Map and an entry object per
   * reservation was garbage made for nothing. Room for two from the start, as `timers`.
   */
  private reserved: unknown[] = [undefined, undefined, undefined, undefined, undefined, undefined];
  /**
   * How many of `reserved`'s (and `deferred`'s, `undo`'s) slots are in use. Why counts, not the
   * arrays' lengths: setting a length to 0 lets V8 drop the array's store, so the next push
   * allocates it again — a list used a few times per request was a fresh array each time.
   */
  private rn = 0;
  /** Events waiting while a step runs (an actor's mailbox); closed until `start()`. */
  private queue: Ev[] = [];
  private busy = true;
  /**
   * Side effects of a macrostep, run after it (XState's deferred actions), in order: flat
   * (effect, argument, argument) triples rather than a closure each — a request makes some twenty.
   */
  private deferred: unknown[] = scratch();
  private dn = 0;
  private spare: unknown[] = scratch();
  private initError: unknown = undefined;
  /**
   * True while nothing but this run holds `context`: assignments then write into it. A copy of
   * the run shares the context, so both turn this off (its copy rule, below the class), and the
   * first assignment after that copies (copy-on-write). Why not XState's new object per
   * assignment: a 30-key context copied for every event (and `trace` copying the path besides)
   * was a tenth of a handler request's garbage. What a reader outside the run sees: `identity()`
   * a string, `path()` a copy, an error's context a copy made from the undo log (`undo`), the
   * output fresh values.
   */
  private owned = false;
  /** True while `context.path` is an array only this run holds: `trace` then pushes onto it. */
  private pathOwned = false;
  /**
   * The macrostep's writes, to give an error the context as it was before the event (as an
   * actor's snapshot): flat (key, previous value) pairs, previous `ABSENT` for a key the context
   * did not have; and the path's length before the first in-place push, or -1. Reset per event.
   */
  private undo: unknown[] = scratch();
  private un = 0;
  private undoPath = -1;
  /** The context's shape (see `copyContext`): how the next copy is made. */
  private _shape: Shape = 0;

  constructor(
    private readonly table: MachineTable,
    private readonly steps: StepSource,
    private readonly clock: StepClock,
    input: AuthInput | typeof COPY,
    private observer: FastObserver
  ) {
    this.state = table.initial;
    if (input === COPY) return;
    try {
      // Built directly (a literal) when the flow's context allows; else the flow's own, whose
      // copies are spread (checking its shape would walk a dictionary-mode object per request).
      const first = startContext(table, input);
      this.context = first.ctx;
      this._shape = first.shape;
      this.owned = true;
      this.pathOwned = first.shape !== 0;
      this.enter(table.initial, INIT);
      this.settle(INIT);
      this.clearUndo();
      this.undoPath = -1;
    } catch (e) {
      // As createActor: the machine is in error before it starts; start() reports it.
      this.context = undefined;
      this.status = 'error';
      this.initError = e;
      this.deferred = [];
      this.dn = 0;
    }
  }

  /** Why this run cannot be copied now (a copy is taken between events), or null. */
  midStep(): string | null {
    return this.busy || this.queue.length || this.dn || this.rn ? 'a request is mid-step' : null;
  }

  /**
   * An unstarted run for the copier to copy `of`'s fields into (its rules, below the class): made
   * by the constructor, so that V8 sizes it to the class's fields.
   */
  static blank(of: FastRun): FastRun {
    return new FastRun(of.table, of.steps, of.clock, COPY, of.observer);
  }

  /** As an actor's start: the resting state's step first, then the deferred timers, then events. */
  start(): void {
    if (this.status === 'error') {
      this.observer.error(this.initError, undefined);
      return;
    }
    if (this.child && this.status === 'active') this.startChild(this.child);
    this.flush();
    this.busy = false;
    if (this.status === 'done') this._complete();
    else if (this.queue.length > 0) this.drain();
    this.insertReserved();
  }

  send(event: AuthEvent | Ev): void {
    if (this.status !== 'active') return;
    this.queue.push(event as Ev);
    if (!this.busy) this.drain();
  }

  private drain(): void {
    this.busy = true;
    while (this.queue.length > 0 && this.status === 'active') {
      const ev = this.queue.shift()!;
      this.un = 0;
      this.undoPath = -1;
      try {
        this.macrostep(ev);
      } catch (e) {
        this.fail(e, this.contextBefore());
        return;
      }
      this.flush();
      // The macrostep moved the status (TypeScript keeps the loop condition's narrowing).
      if ((this.status as FastRun['status']) === 'done') {
        this.busy = false;
        this.clearUndo();
        this._complete();
        this.insertReserved();
        return;
      }
    }
    this.busy = false;
    this.clearUndo();
    this.insertReserved();
  }

  /** The log's entries go (a resting run holds nothing it logged); its store stays. */
  private clearUndo(): void {
    const u = this.undo;
    for (let i = 0; i < this.un; i++) u[i] = undefined;
    this.un = 0;
  }

  /** The context as it was before the current macrostep's writes (a copy; see `undo`). */
  private contextBefore(): Ctx | undefined {
    const cur = this.context;
    if (!cur) return cur;
    const b = { ...cur } as unknown as Record<string, unknown>;
    if (this.undoPath >= 0) b.path = cur.path.slice(0, this.undoPath);
    const u = this.undo;
    for (let i = this.un - 2; i >= 0; i -= 2) {
      const k = u[i] as string;
      if (u[i + 1] === ABSENT) delete b[k];
      else b[k] = u[i + 1];
    }
    return b as unknown as Ctx;
  }

  /** The run rests: the timers it reserved and did not cancel go onto the clock. */
  private insertReserved(): void {
    const r = this.reserved;
    const n = this.rn;
    if (this.busy || n === 0) return;
    this.rn = 0;
    for (let i = 0; i < n; i += 3) {
      const type = r[i] as string;
      const reservation = r[i + 1];
      const event = r[i + 2];
      r[i] = r[i + 1] = r[i + 2] = undefined;
      this.setTimerId(type, this.clock.insertTimer!(reservation, this, event));
    }
  }

  /** A state's `after` timer fired (set with `setTimer` / `insertTimer`): its event. */
  timerFired(arg: unknown): void {
    const event = arg as Ev;
    this.takeTimerId(event.type);
    this.send(event);
  }

  /** Run the deferred side effects of the last macrostep, in order. */
  private flush(): void {
    const deferred = this.deferred;
    const n = this.dn;
    if (n === 0) return;
    // The effects go on a fresh list; this one, run, is the next fresh list (two per run).
    this.deferred = this.spare;
    this.dn = 0;
    try {
      for (let i = 0; i < n; i += 3)
        this.effect(deferred[i] as Effect, deferred[i + 1], deferred[i + 2]);
    } catch (e) {
      this.fail(e, this.context);
      this.spare = [];
      return;
    }
    for (let i = 0; i < n; i++) deferred[i] = undefined;
    this.spare = deferred;
  }

  private _complete(): void {
    this.queue.length = 0;
    // Done: its lists (empty now: the last effects ran) go to the next runs.
    recycle(this.deferred);
    recycle(this.spare);
    recycle(this.undo);
    this.deferred = this.spare = this.undo = DONE_LIST;
    this.dn = this.un = 0;
    this.observer.complete(this.table.output(this.context!, this.doneEvent));
  }

  private doneEvent: Ev = NOT_DONE;

  private fail(e: unknown, before: Ctx | undefined): void {
    if (this.status === 'error') return;
    this.status = 'error';
    this.deferred = [];
    this.dn = 0;
    this.queue.length = 0;
    this.busy = false;
    const t = this.timers;
    const n = this.tn;
    this.timers = [];
    this.tn = 0;
    for (let i = 0; i < n; i += 2) this.clock.clearTimeout(t[i + 1]);
    this.reserved = [];
    this.rn = 0;
    if (this.child) this._stop(this.child);
    this.observer.error(e, before);
  }

  private select(list: Transition[] | undefined, ev: Ev): Transition | null {
    if (!list) return null;
    for (const t of list) if (!t.guard || t.guard(this.context!, ev)) return t;
    return null;
  }

  private macrostep(ev: Ev): void {
    const t =
      this.select(this.state.on.get(ev.type), ev) ??
      this.select(this.table.rootOn.get(ev.type), ev);
    if (!t) return;
    this.microstep(t, ev);
    this.settle(ev);
  }

  /** Eventless transitions until the state rests (or is final). */
  private settle(ev: Ev): void {
    while (this.status === 'active') {
      const t = this.select(this.state.always, ev);
      if (!t) return;
      this.microstep(t, ev);
    }
  }

  private microstep(t: Transition, ev: Ev): void {
    if (!t.target) {
      this._run(t.actions, ev);
      return;
    }
    const from = this.state;
    this._run(from.exit, ev);
    const child = this.child;
    if (from.invoke && child) {
      this.child = null;
      // A step that never started is stopped at once; a running one after the macrostep.
      if (!child.started) child.stopped = true;
      else this.defer(STOP_CHILD, child, null);
    }
    this._run(t.actions, ev);
    this.enter(t.target, ev);
  }

  private enter(s: State, ev: Ev): void {
    this.state = s;
    this._run(s.entry, ev);
    if (s.invoke) {
      const child = new Child(this, s.invoke.id, s.invoke.src, s.invoke.input(this.context!, ev));
      this.child = child;
      this.defer(START_CHILD, child, null);
    }
    if (s.final) {
      this.status = 'done';
      this.doneEvent = s.done ?? { type: `xstate.done.state.${s.name}` };
    }
  }

  private startChild(child: Child): void {
    if (child.started || child.stopped) return;
    child.started = true;
    const steps = this.steps;
    const logic = steps[child.src as StepName];
    try {
      if (!logic) throw new Error(`actor '${child.src}' was not provided`);
      // Called on its source: a host's step is its method.
      child.dispose = logic.call(steps, { input: child.input, port: child });
    } catch (error) {
      // As a child actor that failed to start: an error event for the invoke's onError edge.
      this.send({ type: `xstate.error.actor.${child.id}`, error, actorId: child.id });
    }
  }

  private _stop(child: Child): void {
    if (child.stopped) return;
    child.stopped = true;
    const d = child.dispose;
    child.dispose = undefined;
    if (d) d.stop();
  }

  /** The context to write into: this run's own (copied first if it is shared; see `owned`). */
  private own(): Ctx {
    let ctx = this.context!;
    if (!this.owned) {
      ctx = this.context = this._shape === 0 ? { ...ctx } : copyContext(ctx, this._shape);
      this.owned = true;
    }
    return ctx;
  }

  /**
   * As XState's assign of one key: the key written over (in place; `own`), a key the context did
   * not have added at the end, as a spread would — the copy's literal then no longer matches,
   * so later copies spread. The previous value goes to the undo log.
   */
  private _set(ctx: Ctx, k: string, v: unknown): void {
    const c = ctx as unknown as Record<string, unknown>;
    let old = c[k];
    // Nearly every key holds a value: `in` only for one that reads undefined.
    if (old !== undefined || k in c) {
      if (k === 'path') {
        // A path pushed onto in this macrostep is logged as it was; the new one is not ours.
        if (this.undoPath >= 0) old = (old as string[]).slice(0, this.undoPath);
        this.undoPath = -1;
        this.pathOwned = false;
      }
      this.log(k, old);
    } else {
      this._shape = 0;
      this.log(k, ABSENT);
    }
    c[k] = v;
  }

  /** As `timers.set(type, id)` of a Map. */
  private setTimerId(type: string, id: unknown): void {
    const t = this.timers;
    const n = this.tn;
    for (let i = 0; i < n; i += 2)
      if (t[i] === type) {
        t[i + 1] = id;
        return;
      }
    t[n] = type;
    t[n + 1] = id;
    this.tn = n + 2;
  }

  /** As a Map's `get(type)` then `delete(type)`: the timer's clock id, or undefined. */
  private takeTimerId(type: string): unknown {
    const t = this.timers;
    const n = this.tn;
    for (let i = 0; i < n; i += 2)
      if (t[i] === type) {
        const id = t[i + 1];
        for (let j = i + 2; j < n; j++) t[j - 2] = t[j];
        t[n - 2] = t[n - 1] = undefined;
        this.tn = n - 2;
        return id;
      }
    return undefined;
  }

  private log(k: string, old: unknown): void {
    const n = this.un;
    this.undo[n] = k;
    this.undo[n + 1] = old;
    this.un = n + 2;
  }

  private defer(effect: Effect, x: unknown, y: unknown): void {
    const d = this.deferred;
    const n = this.dn;
    d[n] = effect;
    d[n + 1] = x;
    d[n + 2] = y;
    this.dn = n + 3;
  }

  private _run(actions: readonly Action[], ev: Ev): void {
    for (const a of actions) {
      switch (a.kind) {
        case 'assign': {
          const partial = a.reduce(this.context!, ev, a.params);
          const ctx = this.own();
          for (const k in partial) this._set(ctx, k, (partial as Record<string, unknown>)[k]);
          break;
        }
        case 'stamp': {
          // flow.ts `stamp`: the event's clock reading, if it carries one.
          const ctx = this.own();
          const at = 'at' in ev && typeof ev.at === 'number' ? ev.at : ctx.at;
          this._set(ctx, 'at', at);
          break;
        }
        case 'enter': {
          const ctx = this.own();
          this._set(ctx, 'enteredAt', ctx.at);
          break;
        }
        case 'trace': {
          // flow.ts `trace`: the path with the state appended — onto the run's own array.
          const ctx = this.own();
          if (this.pathOwned) {
            if (this.undoPath < 0) this.undoPath = ctx.path.length;
            ctx.path.push(a.state);
          } else {
            this._set(ctx, 'path', [...ctx.path, a.state]);
            this.pathOwned = true;
          }
          break;
        }
        case 'timer':
          this.defer(SET_TIMER, a.event, a.delay(this.context!));
          break;
        default:
          this.defer(CANCEL_TIMER, a.type, null);
      }
    }
  }

  /** One deferred side effect (see `deferred`). */
  private effect(effect: Effect, x: unknown, y: unknown): void {
    switch (effect) {
      case START_CHILD:
        this.startChild(x as Child);
        return;
      case STOP_CHILD:
        this._stop(x as Child);
        return;
      case SET_TIMER: {
        const event = x as Ev;
        const ms = y as number;
        if (this.clock.reserve && this.clock.insertTimer) {
          const reservation = this.clock.reserve(ms);
          const r = this.reserved;
          const n = this.rn;
          // As a Map's set: a type already reserved keeps its place.
          for (let i = 0; i < n; i += 3)
            if (r[i] === event.type) {
              r[i + 1] = reservation;
              r[i + 2] = event;
              return;
            }
          r[n] = event.type;
          r[n + 1] = reservation;
          r[n + 2] = event;
          this.rn = n + 3;
        } else this.setTimerId(event.type, this.clock.setTimer(ms, this, event));
        return;
      }
      case CANCEL_TIMER: {
        const type = x as string;
        const r = this.reserved;
        const n = this.rn;
        for (let i = 0; i < n; i += 3)
          if (r[i] === type) {
            // As splice(i, 3), keeping the array's store (see `rn`).
            for (let j = i + 3; j < n; j++) r[j - 3] = r[j];
            r[n - 3] = r[n - 2] = r[n - 1] = undefined;
            this.rn = n - 3;
            return;
          }
        const id = this.takeTimerId(type);
        if (id === undefined) return;
        this.clock.clearTimeout(id);
        return;
      }
    }
  }
}

/** An empty list, for a copy (a run copied at rest holds nothing in it). */
const EMPTY: FieldRule = { fresh: () => [] };

/**
 * A run's copy (clone.ts), taken at rest between events (`midStep` refuses otherwise): the same
 * state, context, step and timers, over the copies of its step source (its host), clock and
 * observer. The table, its states and the done event are the table's, never changed: shared.
 *
 * Contexts are never changed in place while shared (`owned`): the copy shares the original's —
 * but for the stored decision a lookup answered with, the store's live entry, whose count of
 * represented presentations the record reads at the end: the copy's store's entry, then. Both
 * runs hold the context (and its path) now: each copies before it writes (`owned`, `pathOwned`
 * false on both). The pending timers are copied (`tn` of them: the rest of the array is spare);
 * the lists a step fills and empties start empty; the undo log is per event.
 */
copyable(FastRun, {
  name: 'fast.FastRun',
  fields: {
    table: 'shared',
    state: 'shared',
    doneEvent: 'shared',
    initError: 'shared',
    context: {
      fresh: (r: FastRun, m: CloneMap) => {
        const ctx = r.context;
        return ctx?.stored ? { ...ctx, stored: m.box(ctx.stored) } : ctx;
      }
    },
    owned: { both: false },
    pathOwned: { both: false },
    timers: { fresh: (r: { timers: unknown[]; tn: number }) => r.timers.slice(0, r.tn) },
    queue: EMPTY,
    reserved: EMPTY,
    deferred: EMPTY,
    spare: EMPTY,
    undo: EMPTY,
    un: { fresh: () => 0 },
    undoPath: { fresh: () => -1 }
  },
  blank: FastRun.blank,
  refuse: (r) => r.midStep()
});
