/**
 * Applying a recorded timeline action to a running engine: one function, on its own so that the
 * clock's event dispatch (events.ts), checkpoints, forks and the session's timeline can all call
 * it without importing the engine class back (it needs only `Simulation`'s type).
 */
import type { Simulation, TimelineAction } from './engine';

/** Apply a recorded action to a simulation (it records the action again, at the same position). */
export function applyAction(sim: Simulation, a: TimelineAction): void {
  switch (a.kind) {
    case 'config':
      sim.setLaneConfig(a.lane, a.client, a.what);
      return;
    case 'policy':
      sim.setLanePolicy(a.lane, a.policy);
      return;
    case 'restart':
      sim.restartClient();
      return;
    case 'extend': {
      const r = sim.extendTo(a.end);
      if (!r.ok) throw new Error(`cannot replay an extension: ${r.message}`);
      return;
    }
    case 'human':
      sim.setHuman(a.lanes);
      return;
    case 'consent':
      if (!sim.answerConsent(a.lane, a.connection, a.requestId, a.approved))
        throw new Error(
          `re-simulation diverged: no consent dialog open for lane ${a.lane}'s request ${JSON.stringify(a.requestId)} on ${a.connection} at ${a.t} after ${a.events} events`
        );
      return;
  }
}
