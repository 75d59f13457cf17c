/// <reference lib="webworker" />
/**
 * The simulation's Web Worker: the engine runs here, off the main thread, so a fast-forward of a
 * simulated day never freezes the page. Commands come in, replies go out (see sim/protocol.ts).
 *
 * Storage. Each run (a load: a new scenario, seed or Reset) gets its own namespace in IndexedDB —
 * durable lanes' decisions under `[run, lane, …]`, the audit log under `[run, n]` — so a second
 * run starts empty and gives the same numbers as the first and as `lab run`; a reload can resume
 * its run (SPEC §4: runs are isolated, restarts are not). The last few runs are kept, older ones
 * pruned; a run in use by another tab (a Web Lock) is never pruned and never shared.
 *
 * Writes go behind in groups after every command (group commit) and every store reports what is
 * on disk only after its transaction commits. Every wait on IndexedDB has a time limit: an open
 * that never answers or a write that never settles marks storage as failed in words, and the
 * simulation goes on from memory.
 */
import { AUDIT_STORE, DurableAuditLog } from '../../store/audit-log';
import { CachedDurableStore } from '../../store/cached-durable-store';
import { DECISIONS_STORE, prefixRange } from '../../store/durable-store';
import { inTransaction, openIdbStore, type OpenResult, type UseStore } from '../../store/idb';
import type { StorageFailure } from '../../store/write-behind';
import type { AuditRecord } from '../../machine/types';
import type { Command, Reply, WorkerReply, WorkerRequest } from '../../sim/protocol';
import { AuditService, type RecordReader } from './audit-service';
import { LANE_IDS, type LaneId } from '../../sim/scenario';
import { Session, type RunStorage } from '../../sim/session';
import { parseFork } from '../../sim/fork';
import { LivePacer, isLiveCommand, type LiveCommand, type LiveRequest } from './live';

const DECISION_DB = 'sampling-policy-lab-run-decisions';
const AUDIT_DB = 'sampling-policy-lab-run-audit';
/** How long an open may take before storage is reported blocked. */
const OPEN_TIMEOUT_MS = 4_000;
/** How long a group commit may take before storage is reported as not answering. */
const WRITE_TIMEOUT_MS = 8_000;
/** Runs kept in IndexedDB besides the newest one (and any a tab is still using). */
const KEEP_RUNS = 4;
/** Registry entries live in the decisions database under this first key element. */
const REGISTRY = '~runs';

interface RunEntry {
  id: string;
  createdAt: number;
}

interface Writable {
  flush(): Promise<boolean>;
  abandon(): void;
  fail(f: StorageFailure): void;
  retry(): Promise<boolean>;
  reattach(s: UseStore): void;
}

interface Run {
  storage: RunStorage;
  decisions: Partial<Record<LaneId, CachedDurableStore>>;
  audit: DurableAuditLog | null;
  release: () => void;
}

let decisionsDb: OpenResult<UseStore> | null = null;
let auditDb: OpenResult<UseStore> | null = null;
let current: Run | null = null;
const session = new Session();
// A seek back or a fork re-simulates into a fresh namespace and shows the branch's own audit rows.
session.replayAudit = true;
/** The audit table's questions: the whole log as a column index, older records read back. */
const auditRows = new AuditService();

/** Open (or re-open, after a failure) both databases, at once, each within the time limit. */
async function openDbs(): Promise<[OpenResult<UseStore>, OpenResult<UseStore>]> {
  const [d, a] = await Promise.all([
    decisionsDb?.ok
      ? decisionsDb
      : openIdbStore(DECISION_DB, DECISIONS_STORE, AbortSignal.timeout(OPEN_TIMEOUT_MS)),
    auditDb?.ok
      ? auditDb
      : openIdbStore(AUDIT_DB, AUDIT_STORE, AbortSignal.timeout(OPEN_TIMEOUT_MS))
  ]);
  decisionsDb = d;
  auditDb = a;
  return [d, a];
}

/** Hold a Web Lock on the run for as long as this worker uses it; false if another tab holds it. */
function lockRun(id: string): Promise<(() => void) | null> {
  const locks = (navigator as Navigator & { locks?: LockManager }).locks;
  if (!locks) return Promise.resolve(() => {});
  return new Promise((resolve) => {
    void locks.request(`spl-run:${id}`, { ifAvailable: true }, (lock) => {
      if (lock === null) {
        resolve(null);
        return undefined;
      }
      return new Promise<void>((release) => resolve(release));
    });
  });
}

async function heldRuns(): Promise<Set<string>> {
  const locks = (navigator as Navigator & { locks?: LockManager }).locks;
  if (!locks) return new Set();
  const q = await locks.query();
  const out = new Set<string>();
  for (const l of q.held ?? [])
    if (l.name?.startsWith('spl-run:')) out.add(l.name.slice('spl-run:'.length));
  return out;
}

function newRunId(): string {
  return `r${Date.now().toString(36)}-${crypto.randomUUID().slice(0, 8)}`;
}

/** Record the run in the registry (what the pruning reads). */
async function register(decisions: UseStore, id: string): Promise<void> {
  await inTransaction<void>(decisions, 'readwrite', (s, done) => {
    const key = [REGISTRY, id];
    const req = s.get(key);
    req.onsuccess = () => {
      if (req.result === undefined) s.put({ id, createdAt: Date.now() } satisfies RunEntry, key);
      done(undefined);
    };
  });
}

/** Audit rows one pruning transaction deletes: others (the new run's commits) go between. */
const PRUNE_CHUNK = 20_000;
/** How long after the last run started the old runs are pruned: once seeks and loads settle. */
const PRUNE_AFTER_MS = 2_000;
let pruneTimer: ReturnType<typeof setTimeout> | null = null;
let pruning = Promise.resolve();

/**
 * Drop all but the newest few runs nobody is using, soon and in chunks. A day-long run leaves
 * hundreds of thousands of audit rows; deleting them in one transaction, right when the next run
 * started, held every later transaction on the audit store — a seek back waited ~29 s for it.
 * Deferred (one pass after the last start) and chunked, the new run's own writes go between.
 * Best effort: what is left is pruned on a later pass.
 */
function pruneSoon(decisions: UseStore): void {
  if (pruneTimer !== null) clearTimeout(pruneTimer);
  pruneTimer = setTimeout(() => {
    pruneTimer = null;
    pruning = pruning.then(() => prune(decisions)).catch(() => {});
  }, PRUNE_AFTER_MS);
}

async function prune(decisions: UseStore): Promise<void> {
  const runs = await inTransaction<RunEntry[]>(decisions, 'readonly', (s, done) => {
    const all = s.getAll(prefixRange([REGISTRY]));
    all.onsuccess = () => done(all.result as RunEntry[]);
  });
  const held = await heldRuns();
  const mine = current?.storage.run;
  if (mine) held.add(mine);
  // The newest few (the current one included) stay, and so does any run a tab is still using.
  const old = runs
    .sort((a, b) => b.createdAt - a.createdAt)
    .filter((r, i) => i > KEEP_RUNS && !held.has(r.id));
  if (old.length === 0) return;
  await inTransaction<void>(decisions, 'readwrite', (s, done) => {
    for (const r of old) {
      s.delete(prefixRange([r.id])!);
      s.delete([REGISTRY, r.id]);
    }
    done(undefined);
  });
  const audit = auditDb?.ok ? auditDb.store : null;
  if (!audit) return;
  for (const r of old) {
    const last = await inTransaction<number>(audit, 'readonly', (s, done) => {
      const c = s.openKeyCursor(prefixRange([r.id]), 'prev');
      c.onsuccess = () => {
        const key = c.result?.key as [string, number] | undefined;
        done(key ? Number(key[1]) : -1);
      };
    });
    for (let lo = 0; lo <= last; lo += PRUNE_CHUNK)
      await inTransaction<void>(audit, 'readwrite', (s, done) => {
        s.delete(IDBKeyRange.bound([r.id, lo], [r.id, lo + PRUNE_CHUNK], false, true));
        done(undefined);
      });
  }
}

/** Open a fresh namespace for the next run (or resume `resume` if this tab may). */
async function startRun(resume?: string, abandonOld = false): Promise<RunStorage> {
  if (current) {
    const old = current;
    current = null;
    // A rewound run's old namespace is never read again (the run memory moves to the new one):
    // its unwritten backlog — after a fast-forward, a day of audit rows — is dropped rather than
    // written, or the new namespace's first transactions would wait behind it (a seek back of a
    // day-long run spent ~29 s here, the re-simulation 2.5 s).
    if (abandonOld) for (const w of writables(old)) w.abandon();
    // The finished run's last batch, then let other tabs (and the pruning) have it.
    void flushRun(old).finally(() => old.release());
  }
  await openDbs();
  let id: string | null = null;
  let release: (() => void) | null = null;
  if (resume) {
    release = await lockRun(resume);
    if (release) id = resume;
  }
  if (!id) {
    id = newRunId();
    release = (await lockRun(id)) ?? (() => {});
  }
  const run: Run = {
    decisions: {},
    audit: null,
    release: release ?? (() => {}),
    storage: { run: null, durable: () => null, durableError: null, audit: null, auditError: null }
  };
  const errors: string[] = [];
  // A rewind's namespace is new (a fresh id) on databases the run was already using: there is
  // nothing in it to read, and reading would wait behind the old branch's last transactions (a
  // day's backlog: ~30 s). Its writes queue behind them instead, held in memory and said so.
  const fresh = abandonOld && id !== resume;
  if (decisionsDb?.ok) {
    const db = decisionsDb.store;
    const registered = register(db, id).then(
      () => pruneSoon(db),
      () => {
        // Housekeeping: a failure here shows up, in words, on the first write instead.
      }
    );
    if (!fresh) await registered;
    for (const lane of LANE_IDS) {
      const r = await CachedDurableStore.attach(db, DECISION_DB, [id, lane], fresh);
      if (r.ok) run.decisions[lane] = r.store;
      else errors.push(r.error);
    }
  } else if (decisionsDb) errors.push(decisionsDb.error);
  let auditError: string | null = null;
  if (auditDb?.ok) {
    const r = await DurableAuditLog.attach(auditDb.store, AUDIT_DB, [id], fresh);
    if (r.ok) run.audit = r.store;
    else auditError = r.error;
  } else if (auditDb) auditError = auditDb.error;
  run.storage = {
    run: run.decisions.A || run.audit ? id : null,
    durable: (lane) => run.decisions[lane] ?? null,
    durableError: errors[0] ?? null,
    audit: run.audit,
    auditError
  };
  current = run;
  return run.storage;
}

function writables(run: Run): Writable[] {
  const out: Writable[] = [];
  for (const lane of LANE_IDS) {
    const s = run.decisions[lane];
    if (s) out.push(s);
  }
  if (run.audit) out.push(run.audit);
  return out;
}

async function flushOne(w: Writable): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), WRITE_TIMEOUT_MS);
  });
  const r = await Promise.race([w.flush(), timeout]);
  clearTimeout(timer);
  if (r === 'timeout')
    w.fail({
      kind: 'timeout',
      words: 'the browser did not finish writing in time',
      error: `A write to IndexedDB did not finish within ${WRITE_TIMEOUT_MS / 1000} s.`
    });
}

async function flushRun(run: Run): Promise<void> {
  await Promise.all(writables(run).map(flushOne));
}

/** Audit rows appended but not yet on disk (they must stay in memory). */
function auditNotOnDisk(): number {
  const log = current?.audit;
  return log ? log.pendingWrites : Infinity;
}

/** Hand the session's new audit records to the audit index. */
function takeAudit(records: AuditRecord[] = session.drainAudit()): void {
  if (records.length > 0) auditRows.append(records, auditNotOnDisk());
}

/**
 * Post replies, each naming the request it answers (`re`; null: news nobody asked for). A live
 * snapshot may go without the audit table's view (`withView` false): the page shows the table's
 * rows a few times a second while playing, and the view is the bulk of a snapshot.
 */
const post = (replies: Reply[], re: number | null, withView = true) => {
  for (const r of replies) {
    if (r.type === 'snapshot') {
      // The page gets the table's view, never the records themselves.
      takeAudit(r.audit);
      r.audit = [];
      if (withView) r.auditView = auditRows.view();
    }
    self.postMessage({ re, reply: r } satisfies WorkerReply);
  }
};

/**
 * Reads log rows back from this run's audit log in IndexedDB: rows appended from `key0` on have
 * keys `[run, key0 + row]`. One getAll over the key range when the rows are dense, else one get
 * per row, in one transaction either way.
 */
function idbReader(run: string, key0: number): RecordReader {
  return (rows) => {
    const db = auditDb?.ok ? auditDb.store : null;
    if (!db) return Promise.reject(new Error("the browser's storage is not available"));
    return inTransaction<AuditRecord[]>(db, 'readonly', (s, done) => {
      const n = rows.length;
      if (n === 0) return done([]);
      const lo = rows[0]!;
      const hi = rows[n - 1]!;
      if (hi - lo + 1 <= 4 * n) {
        const req = s.getAll(IDBKeyRange.bound([run, key0 + lo], [run, key0 + hi]));
        req.onsuccess = () => {
          const all = req.result as AuditRecord[];
          done(all.length === hi - lo + 1 ? Array.from(rows, (r) => all[r - lo]!) : []);
        };
        return;
      }
      const out: AuditRecord[] = new Array<AuditRecord>(n);
      let left = n;
      rows.forEach((r, j) => {
        const req = s.get([run, key0 + r]);
        req.onsuccess = () => {
          out[j] = req.result as AuditRecord;
          if (--left === 0) done(out.includes(undefined as never) ? [] : out);
        };
      });
    });
  };
}

/** Rows read at a time when a reload indexes its run's log again (bounded memory). */
const RESUME_CHUNK = 20_000;

/**
 * A reload resumed its run at the moment it had reached (issue #10): the audit table shows the
 * rows the run wrote before it, read back from the namespace in chunks into a fresh index (they
 * are on disk; only a window of them stays in memory). The restart's own rows follow them, as they
 * did on disk. False (and nothing indexed) when the rows on disk are not the whole log from row 0
 * (a write that failed before the reload): the table then starts at the restart, as before.
 */
async function indexResumed(run: string, rows: number): Promise<boolean> {
  const db = auditDb?.ok ? auditDb.store : null;
  if (!db) return false;
  auditRows.reset(idbReader(run, 0));
  try {
    for (let k = 0; k < rows; k += RESUME_CHUNK) {
      const hi = Math.min(rows, k + RESUME_CHUNK) - 1;
      const got = await inTransaction<AuditRecord[]>(db, 'readonly', (s, done) => {
        const req = s.getAll(IDBKeyRange.bound([run, k], [run, hi]));
        req.onsuccess = () => done(req.result as AuditRecord[]);
      });
      if (got.length !== hi - k + 1) throw new Error('a gap in the stored audit log');
      auditRows.append(got, 0);
    }
    return true;
  } catch {
    return false;
  }
}

/** The audit table's questions, each answered with its id. */
async function answerAudit(
  cmd: Extract<Command, { type: `audit${string}` }>,
  re: number
): Promise<void> {
  try {
    switch (cmd.type) {
      case 'auditWindow':
        auditRows.window = Math.max(1, Math.floor(cmd.window));
        return;
      case 'auditQuery':
        post([{ type: 'auditView', id: cmd.id, view: auditRows.setQuery(cmd.id, cmd.query) }], re);
        return;
      case 'auditRows': {
        const r = await auditRows.rows(cmd.start, cmd.count);
        post([{ type: 'auditRows', id: cmd.id, start: cmd.start, ...r }], re);
        return;
      }
      case 'auditExport': {
        // Everything appended so far should be readable: write it first.
        await flush();
        let last = 0;
        const r = await auditRows.exportFile(cmd.kind, (done, of) => {
          const now = performance.now();
          if (now - last < 100 && done < of) return;
          last = now;
          post([{ type: 'auditExportProgress', id: cmd.id, done, of }], re);
        });
        post([{ type: 'auditExport', id: cmd.id, ok: true, ...r }], re);
        return;
      }
    }
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (cmd.type === 'auditExport')
      post([{ type: 'auditExport', id: cmd.id, ok: false, error: message }], re);
    else if (cmd.type !== 'auditWindow') post([{ type: 'auditError', id: cmd.id, message }], re);
  }
}

let lastStorage = '';
/** Tell the page what is on disk now, when it changed (after every group commit). */
function postStorage(): void {
  if (!session.sim) return;
  const view = session.storageView();
  const json = JSON.stringify(view);
  if (json === lastStorage) return;
  lastStorage = json;
  post([{ type: 'storage', ...view }], null);
}

let flushing = false;
let again = false;
/** Group commit: one batch per store after each command or slice; a call while busy runs once more. */
async function flush(): Promise<void> {
  if (flushing) {
    again = true;
    return;
  }
  flushing = true;
  try {
    do {
      again = false;
      if (current) await flushRun(current);
      postStorage();
    } while (again);
  } finally {
    flushing = false;
  }
}

async function retryStorage(): Promise<void> {
  const run = current;
  // Open both databases afresh: one may not have opened, or another tab may have taken it.
  decisionsDb = null;
  auditDb = null;
  const [d, a] = await openDbs();
  if (!run) return;
  for (const lane of LANE_IDS) {
    const s = run.decisions[lane];
    if (s && d.ok) s.reattach(d.store);
  }
  if (run.audit && a.ok) run.audit.reattach(a.store);
  await Promise.all(writables(run).map((w) => w.retry()));
  postStorage();
}

/**
 * Events per slice, adapted so a slice takes about SLICE_MS of wall time: long enough to keep
 * the overhead of yielding small, short enough that `cancel` is heard at once.
 */
const SLICE_MS = 40;
let sliceEvents = 500;
/** The `fastForward` request the running fast-forward's slices answer. */
let fastForwardRe: number | null = null;

function pump() {
  if (!session.fastForwarding) return;
  const t0 = performance.now();
  post(session.fastForwardSlice(sliceEvents), fastForwardRe);
  takeAudit();
  const took = Math.max(1, performance.now() - t0);
  sliceEvents = Math.max(50, Math.min(50_000, Math.round((sliceEvents * SLICE_MS) / took)));
  void flush();
  if (session.fastForwarding) setTimeout(pump, 0);
}

// ---- Live play (issue #9; live.ts): the worker runs on its own clock, the page only shows ----

/** The play in progress: the `live` request its snapshots answer, and whether the page is ready
 *  for the next one (it has shown the last). */
let live: { re: number; pacer: LivePacer; credit: boolean; viewAt: number } | null = null;
let liveTimer: ReturnType<typeof setTimeout> | undefined;

/**
 * The next batch, in the command queue: a command never runs in the middle of one. At once
 * through a message channel — a chain of `setTimeout(0)` is clamped to 4 ms a link, a quarter of
 * a batch left idle — else after `ms`.
 */
const nextBatch = new MessageChannel();
let batchQueued = false;
nextBatch.port1.onmessage = () => {
  batchQueued = false;
  if (live) queue = queue.then(liveBatch);
};
function scheduleLive(ms: number): void {
  clearTimeout(liveTimer);
  if (ms > 0)
    liveTimer = setTimeout(() => {
      queue = queue.then(liveBatch);
    }, ms);
  else if (!batchQueued) {
    batchQueued = true;
    nextBatch.port2.postMessage(null);
  }
}

function stopLive(): void {
  live = null;
  clearTimeout(liveTimer);
}

/** While playing, group commits at most this often (each is an IndexedDB transaction). */
const LIVE_FLUSH_MS = 50;
let liveFlushAt = -Infinity;

/**
 * One batch of live play: the simulated time the wall clock owes, at most the events that fit in
 * a slice; then its snapshot — posted when the page is ready for it, else only its audit records
 * taken (the page gets the next batch's). The run's end or a breakpoint stops play, and that
 * snapshot is always posted.
 */
function liveBatch(): void {
  const l = live;
  const sim = session.sim;
  if (!l || !sim) return;
  // A fast-forward has the engine: play waits (its time is not owed afterwards).
  if (session.fastForwarding) {
    l.pacer.due(performance.now());
    l.pacer.owed = 0;
    scheduleLive(LIVE_WAIT_FF_MS);
    return;
  }
  const t0 = performance.now();
  l.pacer.due(t0);
  const from = sim.now;
  try {
    const [snap] = session.handle({
      type: 'advance',
      to: l.pacer.target(from),
      maxEvents: l.pacer.events
    });
    if (snap?.type !== 'snapshot') return;
    const took = performance.now() - t0;
    l.pacer.ran(sim.now - from, snap.events, took);
    if (snap.done || snap.paused) {
      stopLive();
      post([snap], l.re);
    } else if (l.credit) {
      l.credit = false;
      const withView = t0 - l.viewAt >= LIVE_VIEW_MS;
      if (withView) l.viewAt = t0;
      post([snap], l.re, withView);
    } else takeAudit(snap.audit);
    if (!live || t0 - liveFlushAt >= LIVE_FLUSH_MS) {
      liveFlushAt = t0;
      void flush();
    }
    if (live === l) scheduleLive(l.pacer.wait(took));
  } catch (err) {
    stopLive();
    post([{ type: 'error', message: err instanceof Error ? err.message : String(err) }], l.re);
  }
}

/** How often a play held up by a fast-forward looks again. */
const LIVE_WAIT_FF_MS = 50;
/** How often a live snapshot carries the audit table's view (the page's AUDIT_MS). */
const LIVE_VIEW_MS = 500;

function handleLive(cmd: LiveCommand, id: number): void {
  switch (cmd.type) {
    case 'live':
      if (live) {
        live.pacer.speed = cmd.speed;
        return;
      }
      if (!session.sim) {
        post([{ type: 'error', message: 'no scenario is loaded' }], id);
        return;
      }
      live = {
        re: id,
        pacer: new LivePacer(cmd.speed, performance.now()),
        credit: true,
        viewAt: -Infinity
      };
      scheduleLive(0);
      return;
    case 'liveSpeed':
      if (live) live.pacer.speed = cmd.speed;
      return;
    case 'liveAck':
      if (live) live.credit = true;
      return;
    case 'liveStop':
      stopLive();
      if (session.sim) post([session.snapshot()], id);
      void flush();
      return;
  }
}

// Start opening the databases now, so the first load does not wait for it.
const opening = openDbs();
// Earlier builds kept one un-namespaced database per lane; nothing reads them any more.
try {
  for (const lane of LANE_IDS)
    indexedDB.deleteDatabase(`sampling-policy-lab-decisions-lane-${lane}`);
} catch {
  // No IndexedDB here: nothing to clean up.
}

/** Whether a command re-simulates the run from its start (needs a fresh namespace first). */
function rewinds(cmd: Command): boolean {
  const sim = session.sim;
  if (!sim) return false;
  if (cmd.type === 'seek') return cmd.t < sim.now;
  return cmd.type === 'fork' && parseFork(cmd.fork, sim.scenario).ok;
}

// Commands are handled in order.
let queue = Promise.resolve();
self.onmessage = (e: MessageEvent<WorkerRequest | LiveRequest>) => {
  const { id, cmd } = e.data;
  if (isLiveCommand(cmd)) {
    queue = queue.then(() => handleLive(cmd, id));
    return;
  }
  queue = queue.then(async () => {
    try {
      await opening;
      if (cmd.type.startsWith('audit')) {
        const audit = cmd as Extract<Command, { type: `audit${string}` }>;
        // An export takes a while: answer later commands meanwhile.
        if (audit.type === 'auditExport') void answerAudit(audit, id);
        else await answerAudit(audit, id);
        return;
      }
      let resumedRows = 0;
      // A new run never goes on playing the old one (the page pauses first; this makes sure).
      if (cmd.type === 'load') stopLive();
      if (cmd.type === 'load') {
        session.setStorage(await startRun(cmd.resume));
        lastStorage = '';
        // A reload mid-run: the log's rows so far are the run's rows up to the restart.
        if (cmd.at && cmd.resume && current?.storage.run === cmd.resume)
          resumedRows = current.audit?.nextKey ?? 0;
      }
      // Time travel back (a seek back, a valid fork) re-simulates the run: into a fresh
      // namespace, so the durable decisions and audit rows of the abandoned branch stay behind.
      const rewind = rewinds(cmd);
      if (rewind) {
        session.setStorage(await startRun(undefined, true));
        lastStorage = '';
      }
      // Where this command's own rows start in the log (a reload's restart writes some at once).
      const key0 = current?.audit?.nextKey ?? 0;
      const wasRunning = session.fastForwarding;
      const replies = session.handle(cmd);
      if (cmd.type === 'load' && replies[0]?.type === 'loaded' && replies[0].ok) {
        const log = current?.audit;
        const run = current?.storage.run;
        const indexed = resumedRows > 0 && !!run && (await indexResumed(run, resumedRows));
        if (!indexed) auditRows.reset(log && run ? idbReader(run, key0) : null);
      }
      if (rewind) {
        const run = current?.storage.run;
        auditRows.reset(current?.audit && run ? idbReader(run, key0) : null);
      }
      post(replies, id);
      if (cmd.type === 'retryStorage') await retryStorage();
      else void flush();
      if (session.fastForwarding && cmd.type === 'fastForward') fastForwardRe = id;
      if (!wasRunning && session.fastForwarding) setTimeout(pump, 0);
    } catch (err) {
      post([{ type: 'error', message: err instanceof Error ? err.message : String(err) }], id);
    }
  });
};
