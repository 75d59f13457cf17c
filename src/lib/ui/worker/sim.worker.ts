/// <reference lib="webworker" />
/**
 * The simulation's Web Worker: the engine runs here, off the main thread, so a fast-forward of a
 * simulated day never freezes the page. Commands come in, replies go out (see sim/session/protocol.ts).
 *
 * This file is the entry: message routing and the command queue. The rest, by concern:
 * commands.ts (a command: what it loads first, the storage and audit index it starts or cuts),
 * fast-forward.ts (the pump) and live-play.ts (play on the worker's clock), loaded on first use
 * (play.ts), memory-check.ts (whether the run may go on), reindex.ts (a reload's audit index built in the background), replies.ts
 * (what the page is told), worker-state.ts (what they share). Each run's IndexedDB namespace
 * (opening, locks, pruning, group commit) is run-storage.ts; the audit table's index, reads back
 * and questions are audit-feed.ts.
 */
import type { WorkerRequest } from '../../sim/session/protocol';
import { loadParsers, parsersLoaded } from '../../sim/input/parsers';
import { isLiveCommand, type LiveRequest } from './live';
import { deleteLegacyDbs, openDbs } from './run-storage';
import { handleCommand, loadedPlay, loadPlay } from './commands';
import { loadSnapshotsQuietly, post } from './replies';
import { enqueue } from './worker-state';

// Start opening the databases now, so the first load does not wait for it.
const opening = openDbs();
deleteLegacyDbs();

const errorOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

// Commands are handled in order.
self.onmessage = (e: MessageEvent<WorkerRequest | LiveRequest>) => {
  const { id, cmd } = e.data;
  if (isLiveCommand(cmd)) {
    // Play runs the engine, whose frames are checked against the SDK's schemas (loaded on first
    // use): the first Play waits for them.
    enqueue(async () => {
      let play = loadedPlay();
      // Loaded, and nothing more to load: at once (an ack follows every live snapshot).
      if (play && (cmd.type !== 'live' || parsersLoaded())) return play.handleLive(cmd, id);
      try {
        [play] = await Promise.all([
          loadPlay(),
          cmd.type === 'live' && !parsersLoaded()
            ? Promise.all([loadParsers(), loadSnapshotsQuietly()])
            : null
        ]);
      } catch (err) {
        post([{ type: 'error', message: errorOf(err) }], id);
        return;
      }
      play.handleLive(cmd, id);
    });
    return;
  }
  enqueue(async () => {
    try {
      await opening;
      await handleCommand(cmd, id);
    } catch (err) {
      post([{ type: 'error', message: errorOf(err) }], id);
    }
  });
};
