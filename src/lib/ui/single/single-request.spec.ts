/**
 * The /single/ page's state class on the virtual clock and fake-indexeddb: what a person sees
 * after each step — the dialog, the one frame, the counts — for both store scopes.
 */
import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { VirtualClock } from '../../sim/world/clock';
import {
  requestText,
  scopeFromSearch,
  SingleRequestPage,
  storageWords,
  urlWithScope
} from './single-request.svelte';

let db = 0;
/** A page on a database of its own; `dbName` opens another page on the same one (a reload). */
function page(dbName = `single-${++db}`): {
  page: SingleRequestPage;
  clock: VirtualClock;
  dbName: string;
} {
  const clock = new VirtualClock(Date.UTC(2026, 0, 5, 9));
  return { clock, dbName, page: new SingleRequestPage({ clock, dbName }) };
}

function deleteDb(name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = indexedDB.deleteDatabase(name);
    req.onsuccess = () => resolve();
    req.onerror = () => reject(req.error);
  });
}

async function deny(p: SingleRequestPage, clock: VirtualClock) {
  p.send();
  await until(clock, () => expect(p.dialog).not.toBeNull());
  p.answer(false);
  await until(clock, () => expect(p.frame !== null && !p.busy).toBe(true));
}

afterEach(() => {
  vi.restoreAllMocks();
});

/** Let promises settle and the virtual clock move until `check` passes. */
async function until(clock: VirtualClock, check: () => void) {
  await vi.waitFor(
    () => {
      clock.runUntil(clock.now() + 500);
      check();
    },
    { timeout: 5_000, interval: 1 }
  );
}

describe('the /single/ page state', () => {
  it('asks once, then answers the same request from the durable store, even on a new connection', async () => {
    const { page: p, clock } = page();
    await p.setup('?scope=durable');
    expect(p.ready).toBe(true);
    expect(p.storeNote).toMatch(/stored durably/);
    expect(p.stored).toBe(0);

    p.send();
    await until(clock, () => expect(p.dialog).not.toBeNull());
    expect(p.prompts).toBe(1);
    expect(requestText(p.dialog!.input.params)).toBe(p.prompt);
    p.answer(true);
    await until(clock, () => expect(p.frame !== null && !p.busy).toBe(true));
    expect(p.summary).toMatch(/^allowed — evaluated afresh, represented 0, consent shown$/);
    expect(p.stored).toBe(1);
    expect(p.saved).toBe(1);

    await p.reconnect();
    expect(p.connectionId).toBe('release-notes#2');
    p.send();
    await until(clock, () => expect(p.frame !== null && !p.busy).toBe(true));
    expect(p.dialog).toBeNull();
    expect(p.prompts).toBe(1);
    expect(p.summary).toMatch(
      /^allowed — answered by the stored approval, represented 1, consent not shown$/
    );
  });

  it('forgets a connection-scoped decision when the connection closes', async () => {
    const { page: p, clock } = page();
    await p.setup('?scope=connection');
    expect(p.storeNote).toMatch(/vanish when it closes/);
    p.send();
    await until(clock, () => expect(p.dialog).not.toBeNull());
    p.answer(false);
    await until(clock, () => expect(p.frame !== null && !p.busy).toBe(true));
    expect(p.frame).toMatchObject({ error: { code: expect.any(Number) } });
    expect(p.stored).toBe(1);
    expect(p.saved).toBeNull();

    await p.reconnect();
    expect(p.stored).toBe(0);
    p.send();
    await until(clock, () => expect(p.dialog).not.toBeNull());
    expect(p.prompts).toBe(2);
  });

  it('says a stored denial was replayed', async () => {
    const { page: p, clock } = page();
    await p.setup('?scope=durable');
    p.send();
    await until(clock, () => expect(p.dialog).not.toBeNull());
    p.answer(false);
    await until(clock, () => expect(p.frame !== null && !p.busy).toBe(true));
    expect(p.summary).toBe('denied (user.denied) — evaluated afresh, represented 0, consent shown');
    p.send();
    await until(clock, () => expect(p.frame !== null && !p.busy).toBe(true));
    expect(p.summary).toBe(
      'denied (user.denied) — replayed from the store, represented 1, consent not shown'
    );
  });

  it('falls back to connection scope, saying so, when IndexedDB cannot open', async () => {
    const clock = new VirtualClock(0);
    // The page's time limit on the open, passed at once.
    const p = new SingleRequestPage({
      clock,
      dbName: 'single-blocked',
      openSignal: () => AbortSignal.abort()
    });
    await p.setup('');
    expect(p.scope).toBe('durable');
    expect(p.storeNote).toBe(
      "IndexedDB is not available (Durable storage did not open in time: the database 'single-blocked' is blocked (another tab of this page may be holding it) or the browser is not answering). Decisions are kept for this connection only: there is no durable guarantee."
    );
    expect(p.saved).toBeNull();
  });

  it('a decision that cannot be saved: its frame still comes, held for this page only and said; Retry saves it', async () => {
    const { page: p, clock, dbName } = page();
    await p.setup('?scope=durable');
    const put = vi.spyOn(IDBObjectStore.prototype, 'put').mockImplementation(() => {
      throw new DOMException('quota', 'QuotaExceededError');
    });
    await deny(p, clock);
    expect(p.frame).toMatchObject({ error: { code: -32003 } });
    expect({ stored: p.stored, saved: p.saved, held: p.held, lost: p.lost }).toEqual({
      stored: 1,
      saved: 0,
      held: 1,
      lost: 0
    });
    expect(storageWords(p)).toBe(
      "1 decision could not be saved — the browser's storage for this site is full (or capped at zero, as in some private windows); it holds for this page only (a reload forgets it). 0 decisions are saved in this browser. There is no durable guarantee here until storage works again."
    );
    // Held in memory with the durable store's meaning: a reconnect meets it.
    await p.reconnect();
    p.send();
    await until(clock, () => expect(p.frame !== null && !p.busy).toBe(true));
    expect(p.summary).toMatch(/replayed from the store/);
    expect(p.prompts).toBe(1);

    // A reload would find nothing.
    const before = page(dbName);
    await before.page.setup('?scope=durable');
    expect(before.page.stored).toBe(0);
    before.page.dispose();

    await p.retryStorage();
    expect(p.failure).toMatch(/storage for this site is full/); // still refused: the spy is on
    put.mockRestore();
    await p.retryStorage();
    expect({ failure: p.failure, saved: p.saved, held: p.held }).toEqual({
      failure: null,
      saved: 1,
      held: 0
    });
    const after = page(dbName);
    await after.page.setup('?scope=durable');
    expect(after.page.stored).toBe(1);
    after.page.dispose();
    p.dispose();
  });

  it('storage deleted by another tab: said at once, the saved decisions counted as lost; Retry writes them again', async () => {
    const { page: p, clock, dbName } = page();
    await p.setup('?scope=durable');
    await deny(p, clock);
    expect({ saved: p.saved, held: p.held }).toEqual({ saved: 1, held: 0 });

    await deleteDb(dbName);
    await vi.waitFor(() => expect(p.lost).toBe(1), { timeout: 5_000, interval: 5 });
    expect({ stored: p.stored, saved: p.saved, held: p.held }).toEqual({
      stored: 1,
      saved: 0,
      held: 1
    });
    expect(storageWords(p)).toBe(
      `Another tab deleted this page's storage (the database '${dbName}'). 1 decision saved in this browser is gone from its storage; 1 decision holds for this page only, 0 decisions are saved in this browser. There is no durable guarantee here until storage works again.`
    );
    // The page goes on from memory: the same request is still answered by the denial.
    p.send();
    await until(clock, () => expect(p.frame !== null && !p.busy).toBe(true));
    expect(p.summary).toMatch(/replayed from the store/);

    await p.retryStorage();
    expect({ failure: p.failure, saved: p.saved, held: p.held }).toEqual({
      failure: null,
      saved: 1,
      held: 0
    });
    const reload = page(dbName);
    await reload.page.setup('?scope=durable');
    expect(reload.page.stored).toBe(1);
    reload.page.dispose();
    p.dispose();
  });

  it('sends each request over a real SDK pair: the server receives the result, or an McpError', async () => {
    const { page: p, clock } = page();
    await p.setup('?scope=durable');
    p.send();
    await until(clock, () => expect(p.dialog).not.toBeNull());
    p.answer(true);
    await until(clock, () => expect(p.received !== null && !p.busy).toBe(true));
    const frame = p.frame as { id: unknown; result: { content: { text: string }; model: string } };
    // The lab's frame answers the SDK server's own request id (its first: 0).
    expect(frame.id).toBe(0);
    expect(p.received).toEqual({
      kind: 'result',
      result: expect.objectContaining({
        role: 'assistant',
        model: frame.result.model,
        content: { type: 'text', text: frame.result.content.text }
      })
    });

    await p.clearStored();
    p.send();
    await until(clock, () => expect(p.dialog).not.toBeNull());
    p.answer(false);
    await until(clock, () => expect(p.received !== null && !p.busy).toBe(true));
    const denial = p.frame as {
      id: unknown;
      error: { code: number; message: string; data: unknown };
    };
    expect(denial.id).toBe(1);
    expect(denial.error.code).toBe(-32003);
    // The server's SDK threw McpError: the same code and data, its message prefixed by the SDK.
    expect(p.received).toEqual({
      kind: 'error',
      name: 'McpError',
      code: -32003,
      message: `MCP error -32003: ${denial.error.message}`,
      data: denial.error.data
    });
    expect(denial.error.data).toMatchObject({ reason: 'user.denied', retryable: false });

    // A new connection is a new SDK pair: its request ids start again.
    await p.reconnect();
    p.send();
    await until(clock, () => expect(p.received !== null && !p.busy).toBe(true));
    expect((p.frame as { id: unknown }).id).toBe(0);
    expect(p.received).toMatchObject({ kind: 'error', code: -32003 });
    expect(p.summary).toMatch(/replayed from the store/);
  });

  it('reads the scope from the URL and builds the other scope’s URL', () => {
    expect(scopeFromSearch('?scope=connection')).toBe('connection');
    expect(scopeFromSearch('?scope=nonsense')).toBe('durable');
    expect(urlWithScope('http://x/single/?scope=durable&a=1', 'connection')).toBe(
      'http://x/single/?scope=connection&a=1'
    );
  });
});
