/**
 * One run for `npm run bench:session` (scripts/bench-session.mjs): `hours` of `scenario.json`,
 * played one of three ways, in Node:
 *   engine  — the guarded engine alone (the invariants as the playground checks them, with the
 *             SDK frame validator), run to the end in one go: bench:guard's guarded run;
 *   session — the playground's Session as the worker drives it in live play: batches of ~16 s
 *             of simulated time (what 1000× asks in a 16 ms batch), each answered with its
 *             snapshot, the audit records drained and dropped;
 *   table   — the same, with the records handed to the audit table's index as the worker does
 *             (audit-service.ts; its full chunks written to a store that drops them).
 * What the worker adds over the engine, without the browser: no IndexedDB, no page. `from`
 * (hours): played first, untimed, so a late hour's cost is timed alone. Prints the requests
 * timed, wall ms and the main thread's CPU µs a request (Linux; else the process's).
 * BENCH_SESSION_PROFILE=FILE: a CPU profile of the timed part alone, written to FILE (read it
 * with scripts/bench-profile-summary.mjs).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { Session as Inspector } from 'node:inspector/promises';
import { scenarioRun } from './bench-scenario-run';
import { Session } from '../src/lib/sim/session/session';
import { loadParsers } from '../src/lib/sim/input/parsers';
import { AuditService } from '../src/lib/ui/worker/audit-service';

const args = process.argv.slice(2);
const [mode = 'session', hoursArg = '1', file = 'bench/ui-50-servers.json', fromArg = '0'] = args;
if (!['engine', 'session', 'table'].includes(mode))
  throw new Error(`mode ${mode}: engine, session or table`);
const hours = Number(hoursArg);
/** Hours played before the timing starts (the same way, untimed): a late hour's cost alone. */
const from = Number(fromArg);

/** The main thread's CPU time so far, ms (null where /proc is not there). */
function mainThreadMs(): number | null {
  const stat = `/proc/self/task/${process.pid}/stat`;
  if (!existsSync(stat)) return null;
  const fields = readFileSync(stat, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** Play up to `until` virtual ms from the start; returns the requests received so far. */
let play: (until: number) => number | Promise<number>;
if (mode === 'engine') {
  const run = scenarioRun(file, hours, { guarded: true });
  play = (until) => {
    run.sim.advanceTo(run.sim.start + until);
    return run.requests();
  };
} else {
  await loadParsers();
  const scenario = { ...JSON.parse(readFileSync(file, 'utf8')), durationMs: hours * 3_600_000 };
  const session = new Session();
  session.replayAudit = true;
  const loaded = session.handle({ type: 'load', scenario });
  if (loaded[0]?.type !== 'loaded' || !loaded[0].ok) throw new Error(JSON.stringify(loaded[0]));
  const table =
    mode === 'table'
      ? new AuditService({
          chunkStore: () => ({ put: async () => {}, get: async () => undefined, drop: () => {} })
        })
      : null;
  // Rows on disk are read back from there (none here: the harness writes nothing), so the
  // table keeps only its window of full records, as the worker's does.
  table?.reset(async (rows) => Array.from(rows, () => undefined));
  play = async (until) => {
    const sim = session.sim!;
    while (!sim.done && sim.now < sim.start + until) {
      const to = Math.min(sim.now + 16_000, sim.start + until);
      const [snap] = session.handle({ type: 'advance', to, maxEvents: 50_000 });
      if (snap?.type !== 'snapshot') throw new Error(`advance: ${snap?.type}`);
      // Every record is on disk at once (none held in memory for want of a write).
      table?.append(snap.audit, 0);
      // Between batches, as the worker does: what they left to do (the index's full chunks
      // written, then let go) runs.
      await new Promise(setImmediate);
    }
    return sim.lanes.A.metrics.counters.requests + sim.lanes.B.metrics.counters.requests;
  };
}

const HOUR = 3_600_000;
const before = from > 0 ? await play(from * HOUR) : 0;
const profileTo = process.env.BENCH_SESSION_PROFILE;
const inspector = profileTo ? new Inspector() : null;
if (inspector) {
  inspector.connect();
  await inspector.post('Profiler.enable');
  await inspector.post('Profiler.start');
}
const main0 = mainThreadMs();
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const requests = (await play(hours * HOUR)) - before;
const wallMs = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const main1 = mainThreadMs();
if (inspector && profileTo) {
  const { profile } = await inspector.post('Profiler.stop');
  writeFileSync(profileTo, JSON.stringify(profile));
}
const cpuMs = (cpu.user + cpu.system) / 1000;
const mainMs = main0 === null || main1 === null ? cpuMs : main1 - main0;
console.log(
  JSON.stringify({
    mode,
    requests,
    wallMs,
    mainUs: (mainMs * 1000) / requests,
    heapMB: Math.round(process.memoryUsage().heapUsed / 2 ** 20),
    cpuUs: (cpuMs * 1000) / requests
  })
);
