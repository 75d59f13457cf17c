/// <reference lib="webworker" />
/**
 * The simulation's Web Worker: the engine runs here, off the main thread, so a fast-forward of a
 * simulated day never freezes the page. Commands come in, replies go out (see sim/protocol.ts).
 * Fast-forwards run in slices with a yield between them, so `cancel` is heard.
 */
import type { Command, Reply } from '../sim/protocol';
import { Session } from '../sim/session';

const session = new Session();
const post = (replies: Reply[]) => {
  for (const r of replies) self.postMessage(r);
};

function pump() {
  if (!session.fastForwarding) return;
  post(session.fastForwardSlice());
  if (session.fastForwarding) setTimeout(pump, 0);
}

self.onmessage = (e: MessageEvent<Command>) => {
  try {
    const wasRunning = session.fastForwarding;
    post(session.handle(e.data));
    if (!wasRunning && session.fastForwarding) setTimeout(pump, 0);
  } catch (err) {
    post([{ type: 'error', message: err instanceof Error ? err.message : String(err) }]);
  }
};
