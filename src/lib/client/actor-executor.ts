/**
 * The host's `actor` executor: each request on an XState actor, its steps invoked as callback
 * actors — what the /single/ page follows live and what the executor specs compare the table
 * executor against.
 *
 * Its own module so that XState stays out of what does not use it: the simulation (and its
 * worker, whose first load it would otherwise weigh) and the handler run the `table` executor
 * (machine/authorize/fast.ts). Importing this module installs it; a host asked for `actor`
 * without it says so (client/host.ts).
 */
import { createActor, fromCallback } from 'xstate';
import {
  authorizationMachine,
  type AuthEvent,
  type CommitInput,
  type ConsentInput,
  type EvaluateRequest,
  type LookupInput,
  type ProviderInput
} from '../machine/authorize';
import type { StepLogic } from '../machine/authorize/fast';
import { installActorExecutor, type ActorExecutor } from './host';

/**
 * A host step as a callback actor: XState's `sendBack` is the step's port, and what stops the
 * step is the actor's cleanup. (Closures, so a run of actors cannot be copied: the simulation
 * re-simulates instead — only the table executor's requests are copied.)
 */
function callback<I>(logic: StepLogic) {
  return fromCallback<AuthEvent, I>(({ input, sendBack }) => {
    const stop = logic({ input, port: { send: sendBack } });
    return stop ? () => stop.stop() : undefined;
  });
}

export const actorExecutor: ActorExecutor = {
  machine: (steps) =>
    authorizationMachine.provide({
      actors: {
        lookupDecision: callback<LookupInput>(steps.lookupDecision),
        evaluatePolicy: callback<EvaluateRequest>(steps.evaluatePolicy),
        askConsent: callback<ConsentInput>(steps.askConsent),
        callProvider: callback<ProviderInput>(steps.callProvider),
        commitDecision: callback<CommitInput>(steps.commitDecision)
      }
    }),
  run: (machine, clock, input, done) => {
    const actor = createActor(machine as typeof authorizationMachine, {
      clock: clock as never,
      input
    });
    actor.subscribe({
      complete: () => {
        const out = actor.getSnapshot().output;
        if (out) done.complete(out);
      },
      // A bug in an action or a guard stops the actor; the server still gets its one frame and
      // the log its record, and the run goes on.
      error: (e) => done.error(e, actor.getSnapshot().context)
    });
    actor.start();
    return {
      actor,
      identity: () => actor.getSnapshot().context.identity,
      path: () => [...actor.getSnapshot().context.path],
      cancel: () => {
        if (actor.getSnapshot().status === 'active')
          actor.send({ type: 'request.cancelled', at: clock.now() });
      }
    };
  }
};

installActorExecutor(actorExecutor);
