/**
 * The one place a scheduled event (world/events.ts) is made to happen. It lives with the engine,
 * which it drives, so the event types stay plain data that the clock can hold without importing
 * the engine.
 */
import { applyAction } from './apply-action';
import type { Simulation } from './engine';
import type { SimEvent } from '../world/events';

/** Make `e` happen in `sim` (the engine's clock calls this for every event it holds). */
export function step(sim: Simulation, e: SimEvent): void {
  switch (e.kind) {
    case 'restart':
      sim.scheduledRestart();
      return;
    case 'trace':
      sim.replayTrace(e.lane, e.server, e.event);
      return;
    case 'deliver': {
      const server = sim.lanes[e.lane].servers.get(e.server);
      if (server?.connected() && server.connection === e.connection)
        server.agent?.onFrame(e.id, e.frame);
      return;
    }
    case 'toolCallFailed': {
      const server = sim.lanes[e.lane].servers.get(e.server);
      if (server?.connected() && server.connection === e.connection)
        server.agent?.onToolCallFailed(e.id);
      return;
    }
    case 'fork': {
      const { action: a, lane, generation } = e;
      sim.unrecorded(() => {
        // A later fork of the lane made this branch's history of it the abandoned one's.
        if (lane && sim.forkedSince(lane, generation)) return;
        // The other lane is the same as before t, so its dialog is open; should it have closed
        // at this very instant (a timeout ordered before the answer), there is nothing to answer.
        if (a.kind === 'consent') sim.answerConsent(a.lane, a.connection, a.requestId, a.approved);
        else applyAction(sim, a);
      });
      return;
    }
    case 'server':
      sim.lanes[e.lane].servers.get(e.server)?.agent?.onTimer(e.timer);
      return;
    case 'answer':
      sim.lanes[e.lane].user.answer(e.ticket);
      return;
    case 'provider':
      sim.lanes[e.lane].provider.fire(e.call);
      return;
  }
}
