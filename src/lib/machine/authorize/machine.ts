/**
 * The authorisation machine: the flow (flow.ts) built into an XState machine with `setup()`, one
 * actor per `sampling/createMessage` request. The statechart, the path walk, /single/ and the
 * reference actor executor use it through XState's public API; the simulation's table executor
 * (fast.ts) reads the same flow description directly.
 *
 * The guards, reducers and delays are the flow's plain functions, wrapped here in XState's
 * signatures (`assign` for the reducers); the states are the flow's, with guard negations as
 * `not()`. IO happens only in the actors declared in `setup`, placeholders the host replaces
 * with `.provide()`.
 */
import { assign, fromCallback, not, setup, type ActorRefFrom, type SnapshotFrom } from 'xstate';
import {
  authorizationFlow,
  registerFlow,
  type Flow,
  type FlowEvent,
  type FlowState,
  type FlowTransition,
  type GuardRef
} from './flow';
import type {
  AuthContext,
  AuthEvent,
  AuthInput,
  AuthOutput,
  CommitInput,
  ConsentInput,
  EvaluateRequest,
  LookupInput,
  ProviderInput
} from './types';

export { STEP_TIMEOUT_MS } from './flow';

/** The placeholder for an actor the driver must provide: fails loudly, through its error edge. */
function notProvided(name: string) {
  return fromCallback<AuthEvent, unknown>(() => {
    throw new Error(`actor '${name}' was not provided`);
  });
}

type Fn = (...args: never[]) => unknown;
const mapValues = <T extends Record<string, Fn>, R>(o: T, f: (v: T[keyof T]) => R) =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v as T[keyof T])])) as {
    [K in keyof T]: R;
  };

type XArgs = { context: AuthContext; event: AuthEvent };

const guard = (g: GuardRef) => (typeof g === 'string' ? g : not(g.not));

/** `prefix`: the root's transitions name their targets as its children (`.erring`). */
const transition = (t: FlowTransition, prefix = '') => ({
  ...(t.target ? { target: prefix + t.target } : {}),
  ...(t.guard ? { guard: guard(t.guard) } : {}),
  ...(t.actions ? { actions: t.actions } : {}),
  ...(t.description ? { description: t.description } : {})
});

const transitions = (
  on: { readonly [k: string]: readonly FlowTransition[] | undefined },
  prefix = ''
) =>
  Object.fromEntries(
    Object.entries(on).map(([k, ts]) => [k, (ts ?? []).map((t) => transition(t, prefix))])
  );

function stateConfig(s: FlowState) {
  return {
    description: s.description,
    ...(s.type ? { type: s.type } : {}),
    entry: s.entry,
    ...(s.invoke
      ? {
          invoke: {
            id: s.invoke.src,
            src: s.invoke.src,
            input: ({ context }: XArgs) => s.invoke!.input(context),
            onError: s.invoke.onError.map((t) => transition(t))
          }
        }
      : {}),
    ...(s.on ? { on: transitions(s.on) } : {}),
    ...(s.after ? { after: transitions(s.after) } : {}),
    ...(s.always ? { always: s.always.map((t) => transition(t)) } : {})
  };
}

function machineConfig(flow: Flow) {
  return {
    id: flow.id,
    context: ({ input }: { input: AuthInput }) => flow.context(input),
    initial: flow.initial,
    output: ({ context }: { context: AuthContext }) => flow.output(context),
    on: transitions(flow.on, '.'),
    states: Object.fromEntries(
      Object.entries(flow.states).map(([name, s]) => [name, stateConfig(s)])
    )
  };
}

const authorizationSetup = setup({
  types: {
    context: {} as AuthContext,
    events: {} as AuthEvent,
    input: {} as AuthInput,
    output: {} as AuthOutput
  },
  actors: {
    lookupDecision: notProvided('lookupDecision') as ReturnType<
      typeof fromCallback<AuthEvent, LookupInput>
    >,
    evaluatePolicy: notProvided('evaluatePolicy') as ReturnType<
      typeof fromCallback<AuthEvent, EvaluateRequest>
    >,
    askConsent: notProvided('askConsent') as ReturnType<
      typeof fromCallback<AuthEvent, ConsentInput>
    >,
    callProvider: notProvided('callProvider') as ReturnType<
      typeof fromCallback<AuthEvent, ProviderInput>
    >,
    commitDecision: notProvided('commitDecision') as ReturnType<
      typeof fromCallback<AuthEvent, CommitInput>
    >
  },
  delays: mapValues(
    authorizationFlow.delays,
    (d) =>
      ({ context }: XArgs) =>
        (d as (c: AuthContext) => number)(context)
  ),
  guards: mapValues(
    authorizationFlow.guards,
    (g) =>
      ({ context, event }: XArgs) =>
        (g as (c: AuthContext, e: FlowEvent) => boolean)(context, event)
  ),
  actions: mapValues(authorizationFlow.reducers, (r) =>
    assign<AuthContext, AuthEvent, undefined, AuthEvent, never>(({ context, event }, params) =>
      (r as (c: AuthContext, e: FlowEvent, p: unknown) => Partial<AuthContext>)(
        context,
        event,
        params
      )
    )
  )
});

export const authorizationMachine = authorizationSetup.createMachine(
  // The flow's types are narrower than XState's generic config; the shape is XState's own.
  machineConfig(authorizationFlow) as unknown as Parameters<
    typeof authorizationSetup.createMachine
  >[0]
);
registerFlow(authorizationMachine, authorizationFlow);

export type AuthorizationMachine = typeof authorizationMachine;
export type AuthorizationActor = ActorRefFrom<AuthorizationMachine>;
export type AuthorizationSnapshot = SnapshotFrom<AuthorizationMachine>;
