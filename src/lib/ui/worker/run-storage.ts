/**
 * The worker's IndexedDB run namespaces (sim.worker.ts uses them). Each run (a load: a new
 * scenario, seed or Reset) gets its own namespace in IndexedDB — durable lanes' decisions under
 * `[run, lane, …]`, the audit log under `[run, n]` — so a second run starts empty and gives the
 * same numbers as the first and as `lab run`; a reload can resume its run (SPEC §4: runs are
 * isolated, restarts are not). The last few runs are kept, older ones pruned; a run in use by
 * another tab (a Web Lock) is never pruned and never shared.
 *
 * Writes go behind in groups after every command (group commit) and every store reports what is
 * on disk only after its transaction commits. Each store commits on its own (its own queue, its
 * own transactions, on its own database): a durable lane's decisions — what makes "do not ask
 * again" survive a reload — never wait behind the audit log's backlog, which after a fast-forward
 * is thousands of rows, or behind an audit write that never settles. (Committed together, one
 * group commit awaiting every store, a held audit write left only 99–255 of a day's 299 decisions
 * on disk at a reload.) Every wait on IndexedDB has a time limit: an open that never answers or a
 * write that never settles marks storage as failed in words, and the simulation goes on from
 * memory.
 *
 * Storage can also be taken away from outside: another tab deletes a database, the browser closes
 * it when its site data is cleared, or rows read back are not there. Then every store of the run
 * stops writing and says why at once; what is left on disk is read back on a fresh connection, and
 * what was counted as saved and is gone is counted as lost (the lanes go on from memory, as after
 * any storage failure, and Retry writes what they hold into the new database).
 *
 * The module owns the two open databases and the run in use (`current`). It is longer than
 * ~400 lines for that reason: opening, locking, pruning, committing and losing storage all read
 * and change that one state, which a split would spread over modules that each reach into it.
 */
import { AUDIT_STORE, DurableAuditLog } from '../../store/audit-log';
import { CachedDurableStore, DECISIONS_STORE } from '../../store/cached-durable-store';
import {
  inTransaction,
  lossWords,
  openIdbStore,
  prefixRange,
  type IdbStore,
  type OpenResult,
  type StorageLoss,
  type UseStore
} from '../../store/idb';
import type { StorageFailure } from '../../store/write-behind';
import { flushWithin } from './write-limit';
import { LANE_IDS } from '../../sim/input/lanes';
import type { LaneId } from '../../sim/input/scenario';
import type { RunStorage } from '../../sim/session/session';
import { dropSnapshots, snapshotSlot } from './run-snapshots';

const DECISION_DB = 'sampling-policy-lab-run-decisions';
/**
 * Named for the log's layout (store/audit-chunks.ts: rows packed in chunks). The database of the
 * earlier layout, one row a record, is deleted unread (deleteLegacyDbs): a run it held resumes
 * from its scenario, re-simulating the rows the new log lacks, as after writes lost at a reload.
 */
const AUDIT_DB = 'sampling-policy-lab-run-audit-chunks';
/** The audit database of the layout before chunks. */
const LEGACY_AUDIT_DB = 'sampling-policy-lab-run-audit';
/** How long an open may take before storage is reported blocked. */
const OPEN_TIMEOUT_MS = 4_000;
/** How long a group commit may go without committing a batch before storage is reported as not answering. */
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
  onCommit: (() => void) | null;
  readonly writeProgress: number;
  abandon(): void;
  fail(f: StorageFailure): void;
  retry(): Promise<boolean>;
  reattach(s: UseStore): void;
  attachedTo(s: UseStore): boolean;
  lose(loss: StorageLoss): void;
  recount(fresh: UseStore | null): Promise<void>;
  status(): { lost: number };
}

export interface Run {
  storage: RunStorage;
  decisions: Partial<Record<LaneId, CachedDurableStore>>;
  audit: DurableAuditLog | null;
  release: () => void;
}

let decisionsDb: OpenResult<IdbStore> | null = null;
let auditDb: OpenResult<IdbStore> | null = null;
let current: Run | null = null;

/** What the worker does when storage changes outside a group commit (a loss, its read-back). */
export interface StorageListener {
  /** Post the storage view again. */
  changed(): void;
  /** The audit log's saved rows were lost (`words`): the table can no longer read them back. */
  auditLost(words: string): void;
  /** A store's group commit has settled: what is on disk may have changed. */
  committed?(): void;
}
let listener: StorageListener = { changed() {}, auditLost() {} };

export function listenStorage(l: StorageListener): void {
  listener = l;
}

/** The run in use (null before the first load). */
export function currentRun(): Run | null {
  return current;
}

/** The audit database's store, when it is open. */
export function auditStore(): UseStore | null {
  return auditDb?.ok ? auditDb.store : null;
}

type Which = 'decisions' | 'audit';

/** Open a database within the time limit, and hear when it is lost. */
async function openWatched(which: Which): Promise<OpenResult<IdbStore>> {
  const [name, storeName] =
    which === 'decisions' ? [DECISION_DB, DECISIONS_STORE] : [AUDIT_DB, AUDIT_STORE];
  const r = await openIdbStore(name, storeName, AbortSignal.timeout(OPEN_TIMEOUT_MS));
  if (r.ok) r.store.onLost((loss) => void storageLost(which, r.store, loss));
  return r;
}

/** Open (or re-open, after a failure) both databases, at once, each within the time limit. */
export async function openDbs(): Promise<[OpenResult<IdbStore>, OpenResult<IdbStore>]> {
  const [d, a] = await Promise.all([
    decisionsDb?.ok ? decisionsDb : openWatched('decisions'),
    auditDb?.ok ? auditDb : openWatched('audit')
  ]);
  decisionsDb = d;
  auditDb = a;
  return [d, a];
}

/** The stores of the run in use that write through `store`. */
function storesOn(which: Which, store: UseStore): Writable[] {
  const run = current;
  if (!run) return [];
  const all: Writable[] =
    which === 'audit'
      ? run.audit
        ? [run.audit]
        : []
      : LANE_IDS.flatMap((lane) => run.decisions[lane] ?? []);
  return all.filter((w) => w.attachedTo(store));
}

/**
 * A database was taken away from outside (or, `missing`, found emptied): every store of the run
 * on it stops writing and says why at once; then what is left is read back — on a fresh
 * connection, the lost one being closed — and what is gone is counted as lost.
 */
async function storageLost(which: Which, store: IdbStore, loss: StorageLoss): Promise<void> {
  const stores = storesOn(which, store);
  if (loss.how === 'missing') {
    // No event: only a read-back that finds rows gone is a loss (a row read under the wrong key
    // is not, and must not stop storage that works).
    for (const w of stores) {
      const before = w.status().lost;
      await w.recount(store);
      if (w.status().lost > before) w.lose(loss);
    }
  } else {
    for (const w of stores) w.lose(loss);
    listener.changed();
    // The next open (here, a Reset's, or Retry's) starts afresh.
    if (which === 'decisions' && decisionsDb?.ok && decisionsDb.store === store) decisionsDb = null;
    if (which === 'audit' && auditDb?.ok && auditDb.store === store) auditDb = null;
    const [d, a] = await openDbs();
    const fresh = which === 'decisions' ? d : a;
    await Promise.all(stores.map((w) => w.recount(fresh.ok ? fresh.store : null)));
  }
  const log = current?.audit;
  if (which === 'audit' && log && stores.includes(log) && log.status().lost > 0)
    listener.auditLost(loss.words);
  listener.changed();
}

/**
 * Rows the audit log had saved were not there when read back (the table or an export asked):
 * the database was emptied without an event this page heard. Said and counted as for a loss, once.
 */
let checking = false;
export function auditReadBackFailed(): void {
  const log = current?.audit;
  const db = auditDb?.ok ? auditDb.store : null;
  if (checking || !log || !db || !log.attachedTo(db) || log.status().failure?.kind === 'lost')
    return;
  checking = true;
  void storageLost('audit', db, { how: 'missing', words: lossWords('missing', AUDIT_DB) }).finally(
    () => (checking = false)
  );
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
  await dropSnapshots(old.map((r) => r.id));
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
export async function startRun(resume?: string, abandonOld = false): Promise<RunStorage> {
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
      const r = await CachedDurableStore.attach(db, DECISION_DB, [id, lane], { fresh });
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
  // The page hears of every batch written, not only of a whole commit.
  for (const w of writables(run)) w.onCommit = () => listener.committed?.();
  run.storage = {
    run: run.decisions.A || run.audit ? id : null,
    durable: (lane) => run.decisions[lane] ?? null,
    durableError: errors[0] ?? null,
    audit: run.audit,
    auditError,
    // The run's latest engine snapshot (issue #21): a resumed namespace's is read for the reload.
    snapshots: await snapshotSlot(id, id === resume && !fresh)
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

/** One store's group commit: the one under way, whether to go once more, and when it began. */
interface Commit {
  running: Promise<void>;
  again: boolean;
  since: number;
}
const commits = new WeakMap<Writable, Commit>();

/**
 * A group commit of one store, within the time limit (write-limit.ts: time without progress). A
 * call while that store's commit runs makes it write once more and answers with it; other stores
 * are not waited for. Resolves once what the store had queued before the call is written (or
 * storage has failed).
 */
function commitOne(w: Writable): Promise<void> {
  const under = commits.get(w);
  if (under) {
    under.again = true;
    return under.running;
  }
  const c: Commit = { running: Promise.resolve(), again: false, since: performance.now() };
  // Set before the loop can end: its first await comes only after `commits.set` below.
  c.running = (async () => {
    await Promise.resolve();
    try {
      do {
        c.again = false;
        c.since = performance.now();
        await flushWithin(w, WRITE_TIMEOUT_MS);
        listener.committed?.();
      } while (c.again);
    } finally {
      commits.delete(w);
    }
  })();
  commits.set(w, c);
  return c.running;
}

/**
 * Group commit of every store of `run`, each on its own: resolves once all of them have written
 * what they had queued before the call (or failed), but no store waits for another to begin.
 */
export async function flushRun(run: Run): Promise<void> {
  await Promise.all(writables(run).map(commitOne));
}

/**
 * The group commit after a command or a slice (sim.worker.ts): every store of the run in use,
 * each on its own (see {@link flushRun}).
 */
export function groupCommit(): Promise<void> {
  return current ? flushRun(current) : Promise.resolve();
}

/**
 * The group commit of one side of the run in use: its audit log, or its lanes' decisions. Live
 * play commits them at different paces (live-play.ts).
 */
export function commitStores(which: Which): Promise<void> {
  const run = current;
  if (!run) return Promise.resolve();
  const stores: Writable[] =
    which === 'audit'
      ? run.audit
        ? [run.audit]
        : []
      : LANE_IDS.flatMap((lane) => run.decisions[lane] ?? []);
  return Promise.all(stores.map(commitOne)).then(() => undefined);
}

/**
 * How long the audit log's group commit under way has been writing (ms; 0 when none is): a
 * fast-forward waits for a commit that runs long rather than grow the backlog behind it.
 */
export function auditCommitAge(): number {
  const log = current?.audit;
  const c = log ? commits.get(log) : undefined;
  return c ? performance.now() - c.since : 0;
}

/** The audit log's group commit under way, or a new one: resolves once it has settled. */
export function auditCommitted(): Promise<void> {
  const log = current?.audit;
  if (!log) return Promise.resolve();
  return commits.get(log)?.running ?? commitOne(log);
}

/**
 * Re-open storage after a failure and retry what the run in use has not written; false if there
 * is no run (nothing to retry).
 */
export async function reopenStorage(): Promise<boolean> {
  const run = current;
  // Open both databases afresh: one may not have opened, or another tab may have taken it.
  decisionsDb = null;
  auditDb = null;
  const [d, a] = await openDbs();
  if (!run) return false;
  for (const lane of LANE_IDS) {
    const s = run.decisions[lane];
    if (s && d.ok) s.reattach(d.store);
  }
  if (run.audit && a.ok) run.audit.reattach(a.store);
  await Promise.all(writables(run).map((w) => w.retry()));
  return true;
}

/**
 * Earlier builds kept one un-namespaced database per lane, and the audit log one row a record;
 * nothing reads them any more.
 */
export function deleteLegacyDbs(): void {
  try {
    for (const lane of LANE_IDS)
      indexedDB.deleteDatabase(`sampling-policy-lab-decisions-lane-${lane}`);
    indexedDB.deleteDatabase(LEGACY_AUDIT_DB);
  } catch {
    // No IndexedDB here: nothing to clean up.
  }
}
