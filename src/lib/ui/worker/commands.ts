/**
 * A command from the page, handled in the queue (sim.worker.ts): what it needs loaded first, the
 * run's storage namespace it starts (a new run, a reload resuming one, a rewind re-simulating
 * into a fresh one), the audit index it resets or cuts, and its replies.
 */
import type { Command } from '../../sim/session/protocol';
import { loadParsers, parsersLoaded } from '../../sim/input/parsers';
import { prepareReadyMade } from '../../sim/input/ready-made';
import { currentRun, flushRun, startRun } from './run-storage';
import { auditRows, idbReader, takeAudit } from './audit-feed';
import { indexMore } from './audit-reindex';
import { indexInBackground, indexReadyFor, routeAudit } from './reindex';
import {
  flush,
  loadSnapshotsQuietly,
  post,
  retryStorage,
  saveSnapshot,
  storageChanged
} from './replies';
import { budgets, session } from './worker-state';

// ---- What loads on first use (issue #24): the worker starts without zod ----

type Play = typeof import('./play');
/** Live play and the fast-forward pump, once loaded (null: nothing has played yet). */
let play: Play | null = null;
let playLoading: Promise<Play> | null = null;
/** Live play and the fast-forward pump if loaded (null: not yet). */
export function loadedPlay(): Play | null {
  return play;
}
/** Live play and the fast-forward pump (play.ts), fetched once: a Play, a fast-forward, a stop. */
export function loadPlay(): Promise<Play> {
  playLoading ??= import('./play').then((m) => (play = m));
  return playLoading;
}

/** Commands that neither parse a person's input nor run the engine. */
const WITHOUT_PARSERS = new Set<Command['type']>([
  'timeline',
  'fork?',
  'checkpoints',
  // Breakpoint conditions are parsed without zod (sim/timeline/breakpoints.ts).
  'setBreakpoints',
  'inspect',
  'memoryBudget',
  'retryStorage',
  'cancel',
  'auditQuery',
  'auditRows',
  'auditExport',
  'auditWindow'
]);

/**
 * Load what `cmd` needs before the session handles it. The parsers and the SDK's frame schemas
 * (sim/input/parsers.ts: zod) come on first use: a ready-made scenario loads precompiled
 * (ready-made.ts), an advance that reaches no event runs nothing to check, and the commands above
 * need neither; anything else — a person's own scenario, a reload's or a link's timeline, a fork,
 * the first Play or fast-forward — waits for them (once; then they are there).
 */
async function prepare(cmd: Command): Promise<void> {
  if (parsersLoaded() || WITHOUT_PARSERS.has(cmd.type)) return;
  if (cmd.type === 'load' && !cmd.at && !cmd.link && (await prepareReadyMade(cmd.scenario))) return;
  // An advance that runs no event (the page's advance to a new run's start: the engine runs an
  // event due at t only on its way past t, or owed by a slice cut short — and no slice has run
  // before the parsers are here). Were one run all the same, its frame check would throw, not pass.
  if (cmd.type === 'advance' && session.sim && !session.fastForwarding) {
    const next = session.sim.clock.nextAt();
    if (cmd.to <= session.sim.now || next === null || next > cmd.to) return;
  }
  // The snapshot code with them: the engine is about to run, or a reload to resume.
  await Promise.all([loadParsers(), loadSnapshotsQuietly()]);
}

/** Handle `cmd`, request `id` (its errors are the caller's to say). */
export async function handleCommand(cmd: Command, id: number): Promise<void> {
  // What replaces or cuts the audit index waits for a reload's to be built.
  await indexReadyFor(cmd);
  await prepare(cmd);
  if (cmd.type.startsWith('audit')) {
    await routeAudit(cmd as Extract<Command, { type: `audit${string}` }>, id);
    return;
  }
  if (cmd.type === 'memoryBudget') {
    if (cmd.heldRecords !== undefined) budgets.maxHeld = cmd.heldRecords;
    if (cmd.chartPoints !== undefined) budgets.chartPoints = cmd.chartPoints;
  }
  // A reload mid-run resuming this tab's run: its log holds the run's rows so far.
  let resuming = false;
  // A new run never goes on playing the old one (the page pauses first; this makes sure).
  if (cmd.type === 'load') play?.stopLive();
  if (cmd.type === 'load') {
    session.setStorage(await startRun(cmd.resume));
    storageChanged();
    // A reload mid-run: the log's rows so far are the run's rows up to the restart.
    const current = currentRun();
    const resumed = !!cmd.resume && current?.storage.run === cmd.resume;
    if (cmd.at && resumed) resuming = true;
    // Resumed without a time (the page remembered none: it plays the run from its start
    // again): the log's rows are another branch's. The session writes and the table reads
    // row n at key n, so they go, as a reload at t cuts the rows after t — else the new
    // rows would be taken as already written and read back from keys holding other ones.
    if (!cmd.at && resumed) current?.audit?.truncate(0);
  }
  // Time travel back (a seek back, a valid fork) re-simulates the run: into a fresh
  // namespace, so the durable decisions and audit rows of the abandoned branch stay behind.
  const rewind = session.rewinds(cmd);
  if (rewind) {
    session.setStorage(await startRun(undefined, true));
    storageChanged();
  }
  // Where this command's own rows start in the log (a reload's restart writes some at once).
  const key0 = currentRun()?.audit?.nextKey ?? 0;
  // Rows the resumed log counts as on disk before the reload's re-simulation writes any.
  const saved0 = currentRun()?.audit?.status().saved ?? 0;
  const wasRunning = session.fastForwarding;
  const replies = session.handle(cmd);
  if (cmd.type === 'load' && replies[0]?.type === 'loaded' && replies[0].ok) {
    const current = currentRun();
    const log = current?.audit;
    const run = current?.storage.run;
    // The rows up to where the run was (the log may have held later ones of a seek back:
    // the session cut them, as the restart begins a new branch there).
    const upTo = replies[0].auditRows;
    // Rows whose writes were behind at the reload are not on disk: the table takes the rows
    // that are (from row 0 to the first missing one); the re-simulation made the ones the
    // log lacked again (rows key0 … upTo − 1, written and handed to the table), and the
    // restart's follow them, from where the log goes on (the session cut it to `upTo` if
    // it was longer).
    const restored = resuming && upTo !== undefined ? Math.max(0, upTo - key0) : 0;
    if (resuming && run && upTo !== undefined) {
      // Built in the background (issue #21: at 12 h it takes seconds): the run is ready at
      // once; the table's questions wait for it, its snapshots carry no view meanwhile.
      indexInBackground(run, upTo, key0, restored, saved0, !!log);
    } else {
      auditRows.reset(log && run ? idbReader(run, upTo ?? key0) : null);
      // The table starts at the restart: the rows made again are not its rows.
      if (restored > 0) takeAudit(session.drainAudit().slice(restored));
    }
  }
  if (rewind) {
    const current = currentRun();
    const run = current?.storage.run;
    auditRows.reset(current?.audit && run ? idbReader(run, key0) : null);
  }
  // Restored in place: the table shows the rows up to t — fewer (back), or more, read from
  // the log that holds them (forward: the copy wrote none).
  let inPlace = false;
  for (const r of replies)
    if (r.type === 'seeked' && r.inPlace) {
      inPlace = true;
      const current = currentRun();
      const run = current?.storage.run;
      if (r.auditRows <= auditRows.size) await auditRows.truncate(r.auditRows);
      else if (current && run) {
        // Everything queued so far on disk first (whatever flush is under way), then read.
        await flushRun(current);
        // Rows missing from the log (a write that failed): the table starts at t instead of
        // numbering later rows wrong.
        if (!(await indexMore(run, r.auditRows)))
          auditRows.reset(current.audit ? idbReader(run, r.auditRows) : null);
      }
    }
  post(replies, id);
  if (!session.fastForwarding && !play?.playing()) saveSnapshot();
  // Its snapshot told what was on disk before the restore's writes: say it again after them
  // (the next group commit posts the storage even if it equals the last one posted).
  if (inPlace) storageChanged();
  if (cmd.type === 'retryStorage') await retryStorage();
  else void flush();
  if (session.fastForwarding) {
    const p = play ?? (await loadPlay());
    if (cmd.type === 'fastForward') p.fastForwardAnswers(id);
    if (!wasRunning) p.startPump();
  }
}
