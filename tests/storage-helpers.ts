/**
 * Shared by the storage tests: a day-long durable scenario as a share link, storage faults
 * injected into the simulation worker (an init script for the worker: its file is served with the
 * fault prepended), and a direct look at what IndexedDB holds for the current run.
 */
import { readFileSync } from 'node:fs';
import { expect, type BrowserContext, type Page } from '@playwright/test';
import type { StoredDecision } from '../src/lib/machine/types';
import { replayNamespace } from '../src/lib/store/decision-log';
import { encodeScenarioHash } from '../src/lib/ui/share';

export const DECISIONS_DB = 'sampling-policy-lab-run-decisions';
/** The audit log's rows are stored in chunks keyed `[run, first, count]` (store/audit-chunks.ts). */
export const AUDIT_DB = 'sampling-policy-lab-run-audit-chunks';

/** reconnect-bypass for a simulated day: lane B (durable) stores 299 decisions and deletes none. */
export function dayLink(hours = 24): string {
  const data = JSON.parse(readFileSync('static/scenarios/reconnect-bypass.json', 'utf8')) as Record<
    string,
    unknown
  >;
  data.durationMs = hours * 3_600_000;
  return `./${encodeScenarioHash(data)}`;
}

export type Fault =
  /** Writes fail as over quota after `after` puts, until {@link healStorage} makes room again. */
  | { kind: 'quota'; after: number }
  | { kind: 'abort'; after: number }
  | { kind: 'hang' }
  | { kind: 'absent' }
  /**
   * Writes to the object store `store` fall behind for good once `after` rows (audit rows, decision
   * changes) are on disk: every transaction that would write more is never written and never
   * answers (the group commit waits on it, as on a slow disk), for as long as the page lives. A
   * reload (unrouted) ends it.
   */
  | { kind: 'hold'; store: string; after: number }
  /**
   * Reads of whole ranges (`getAll`) of the object store `store` are answered only once
   * {@link healStorage} is called: their transactions complete, but nobody hears of it till then.
   */
  | { kind: 'holdReads'; store: string };

/** Runs first in the worker: breaks IndexedDB the way `fault` says. Self-contained (serialised). */
export function breakIndexedDb(fault: Fault): void {
  if (fault.kind === 'absent') {
    Object.defineProperty(self, 'indexedDB', { value: undefined, configurable: true });
    return;
  }
  if (fault.kind === 'hang') {
    // An open whose request never fires a single event.
    IDBFactory.prototype.open = function () {
      return {} as IDBOpenDBRequest;
    };
    return;
  }
  if (fault.kind === 'holdReads') {
    const getAll = IDBObjectStore.prototype.getAll;
    let waiting: (() => void)[] | null = [];
    new BroadcastChannel('storage-fault').onmessage = () => {
      const go = waiting ?? [];
      waiting = null;
      for (const f of go) f();
    };
    const marked = new WeakSet<IDBTransaction>();
    IDBObjectStore.prototype.getAll = function (
      this: IDBObjectStore,
      ...args: [(IDBValidKey | IDBKeyRange | null)?, number?]
    ) {
      const tx = this.transaction;
      if (this.name === fault.store && waiting && !marked.has(tx)) {
        marked.add(tx);
        // Whoever waits for the transaction's end hears of it once the reads are let through.
        let handler: ((this: IDBTransaction, e: Event) => unknown) | null = null;
        Object.defineProperty(tx, 'oncomplete', {
          configurable: true,
          get: () => handler,
          set: (h: typeof handler) => {
            handler = h;
          }
        });
        tx.addEventListener('complete', (e) => {
          const call = () => handler?.call(tx, e);
          if (waiting) waiting.push(call);
          else call();
        });
      }
      return getAll.apply(this, args);
    };
    return;
  }
  if (fault.kind === 'hold') {
    const put = IDBObjectStore.prototype.put;
    let written = 0;
    const held = new WeakSet<IDBTransaction>();
    const passed = new WeakSet<IDBTransaction>();
    IDBObjectStore.prototype.put = function (
      this: IDBObjectStore,
      ...args: [unknown, IDBValidKey?]
    ) {
      if (this.name !== fault.store) return put.apply(this, args);
      const tx = this.transaction;
      // A whole transaction is written or held, so what is on disk is whole batches.
      if (!held.has(tx) && !passed.has(tx)) {
        if (written >= fault.after) {
          held.add(tx);
          // Nothing is put (it commits empty) and whoever waits for it never hears.
          for (const on of ['oncomplete', 'onabort', 'onerror'])
            Object.defineProperty(tx, on, { configurable: true, get: () => null, set: () => {} });
        } else passed.add(tx);
      }
      if (held.has(tx)) return {} as IDBRequest<IDBValidKey>;
      // Count rows, not records: an audit chunk's key ends in its row count; a decision log
      // record holds a change a line (store/decision-log.ts).
      const [value, key] = args;
      if (this.name === 'audit') written += Array.isArray(key) ? Number(key[2]) : 1;
      else written += typeof value === 'string' ? value.split('\n').length : 1;
      return put.apply(this, args);
    };
    return;
  }
  const put = IDBObjectStore.prototype.put;
  let n = 0;
  let healed = false;
  new BroadcastChannel('storage-fault').onmessage = () => {
    healed = true;
  };
  const failing = new WeakSet<IDBTransaction>();
  IDBObjectStore.prototype.put = function (this: IDBObjectStore, ...args: [unknown, IDBValidKey?]) {
    const req = put.apply(this, args);
    n += 1;
    const tx = this.transaction;
    if (n > fault.after && !healed && !failing.has(tx)) {
      failing.add(tx);
      // As the browser does: the write is accepted, then the transaction fails as a whole.
      req.addEventListener('success', () => {
        const name = fault.kind === 'quota' ? 'QuotaExceededError' : 'AbortError';
        Object.defineProperty(tx, 'error', { value: new DOMException(`injected ${name}`, name) });
        try {
          tx.abort();
        } catch {
          // already finishing
        }
      });
    }
    return req;
  };
}

/** Serve the simulation worker with `fault` prepended, for every page of `target`. */
export async function injectWorkerFault(target: Page | BrowserContext, fault: Fault) {
  await target.route('**/workers/sim.worker-*.js', async (route) => {
    const res = await route.fetch();
    const body = `(${breakIndexedDb.toString()})(${JSON.stringify(fault)});\n${await res.text()}`;
    await route.fulfill({ response: res, body });
  });
}

/** The injected fault stops: the disk has room again. */
export async function healStorage(page: Page) {
  await page.evaluate(() => new BroadcastChannel('storage-fault').postMessage('heal'));
}

export async function openDay(page: Page, hours = 24) {
  await page.goto(dayLink(hours));
  await expect(page.getByRole('button', { name: 'Play' })).toBeEnabled({ timeout: 20_000 });
}

export async function simulate(page: Page, hours = 24) {
  await page.getByLabel('Hours', { exact: true }).fill(String(hours));
  await page.getByRole('button', { name: `Simulate ${hours} h` }).click();
  await expect(page.getByLabel('Simulated time', { exact: true })).toHaveText(`${hours}:00:00`, {
    timeout: 90_000
  });
  await expect(page.getByRole('progressbar', { name: 'Fast-forward progress' })).toBeHidden();
}

export const shown = async (page: Page, label: string) =>
  Number(
    (await page.getByLabel(label, { exact: true }).textContent())!.replace(/[^0-9]/g, '') || NaN
  );

/** The run this tab is on (the page keeps it for a reload). */
export const runId = (page: Page) =>
  page.evaluate(
    () =>
      (JSON.parse(sessionStorage.getItem('sampling-policy-lab-run') ?? 'null') as { id: string })
        ?.id ?? null
  );

/**
 * The records IndexedDB holds under `prefix` in database `db`, as parallel keys and values, read
 * from the page (faults live in the worker only); none when the database does not exist.
 */
function diskRecords(
  page: Page,
  db: string,
  prefix: (string | number)[],
  keysOnly: boolean
): Promise<[unknown[], unknown[]]> {
  return page.evaluate(
    ([db, prefix, keysOnly]) =>
      new Promise<[unknown[], unknown[]]>((resolve, reject) => {
        // Opening a database that does not exist would create it, without its store.
        void indexedDB.databases().then((all) => {
          if (!all.some((d) => d.name === db)) return resolve([[], []]);
          const open = indexedDB.open(db);
          open.onerror = () => reject(open.error);
          open.onsuccess = () => {
            const conn = open.result;
            if (!conn.objectStoreNames.length) {
              conn.close();
              return resolve([[], []]);
            }
            const store = conn
              .transaction(conn.objectStoreNames[0]!, 'readonly')
              .objectStore(conn.objectStoreNames[0]!);
            const range = IDBKeyRange.bound(prefix, [...prefix, []], true, true);
            const keys = store.getAllKeys(range);
            const values = keysOnly ? null : store.getAll(range);
            const last = values ?? keys;
            last.onsuccess = () => {
              conn.close();
              resolve([keys.result, values?.result ?? []]);
            };
            last.onerror = () => reject(last.error);
          };
        });
      }),
    [db, prefix, keysOnly] as const
  );
}

/**
 * The decisions IndexedDB holds for the namespace `prefix` (`[run, lane]`): its records replayed
 * (the decision store writes a log of group commits, store/decision-log.ts), what a reload finds.
 */
export async function diskDecisions(
  page: Page,
  prefix: (string | number)[]
): Promise<StoredDecision[]> {
  const [keys, values] = await diskRecords(page, DECISIONS_DB, prefix, false);
  return [...replayNamespace(prefix, keys, values).decisions()];
}

/**
 * What IndexedDB holds under `prefix`: for the decisions database, the decisions a replay of its
 * log finds; for the audit log, rows (its chunk keys end in their row count).
 */
export async function diskCount(
  page: Page,
  db: string,
  prefix: (string | number)[]
): Promise<number> {
  if (db === DECISIONS_DB) return (await diskDecisions(page, prefix)).length;
  const [keys] = await diskRecords(page, db, prefix, true);
  let n = 0;
  for (const k of keys) n += db === AUDIT_DB && Array.isArray(k) ? Number(k[prefix.length + 1]) : 1;
  return n;
}
