/**
 * The /single/ page's state: one client host driven by a person, one request at a time, against
 * a durable (IndexedDB) or connection-scoped decision store. Each request travels over real MCP:
 * an SDK server sends it to an SDK client whose sampling handler is this host (sdk-pair.ts), so
 * the page shows both the frame the lab built and what the server's SDK received. The page only
 * renders this; the clock and the database are injected so a unit test can drive the same flow on
 * the virtual clock and fake-indexeddb.
 *
 * The durable scope is the store the playground's runs use (store/cached-durable-store.ts), with
 * their fallback: a decision that cannot be saved holds in memory for this page only, and the page
 * says so in words, counts saved and held apart, and offers Retry storage. Opened `writeThrough`:
 * each decision is on disk (or its failure known) before its frame is sent.
 */
import { useSelector } from '@xstate/svelte';
import type { ConsentInput } from '../../machine/authorize';
import { resolveClientConfig, type StoreScope } from '../../machine/config';
import { defaultPolicy } from '../../machine/policy';
import type {
  AuditRecord,
  CreateMessageResult,
  Frame,
  IncludeContext,
  JsonRpcId,
  SamplingParams
} from '../../machine/types';
import { MemoryAuditLog } from '../../store/audit-log';
import { ConnectionDecisionStore } from '../../store/connection-store';
import {
  CachedDurableStore,
  DECISIONS_STORE,
  DEFAULT_DECISION_DB
} from '../../store/cached-durable-store';
import type { DecisionStore } from '../../store/decision-store';
import { openIdbStore, type IdbStore, type OpenResult, type StorageLoss } from '../../store/idb';
import type { Driver } from '../../client/driver';
import { ClientHost } from '../../client/host';
// This page follows each request's XState actor live: the host's actor executor.
import '../../client/actor-executor';
import { cardsByModel, createProvider, DEFAULT_PROVIDER } from '../../sim/actors/provider';
import { Rng } from '../../sim/world/rng';
import { answerOf, openSdkPair, type Received, type SdkPair } from './sdk-pair';

export interface SingleRequestDeps {
  /** Real time in the page; a virtual clock in tests. */
  clock: Driver;
  /** The decisions database (a test gives each page its own). */
  dbName?: string;
  /** Bounds each wait for IndexedDB to open (the page passes a timeout: a hung one must not hang it). */
  openSignal?: () => AbortSignal;
}

/** The scope a page URL asks for: durable unless it says `connection`. */
export function scopeFromSearch(search: string): StoreScope {
  // eslint-disable-next-line svelte/prefer-svelte-reactivity -- read once, never observed
  return new URLSearchParams(search).get('scope') === 'connection' ? 'connection' : 'durable';
}

/** What the durable store's counts and failure mean, in words (null while storage works). */
export function storageWords(s: {
  failure: string | null;
  held: number;
  lost: number;
  saved: number | null;
}): string | null {
  if (s.failure === null) return null;
  const n = (k: number, one: string, many: string) => `${k} ${k === 1 ? one : many}`;
  const upper = s.failure.charAt(0).toUpperCase() + s.failure.slice(1);
  const saved = `${n(s.saved ?? 0, 'decision is', 'decisions are')} saved in this browser`;
  const held = `${n(s.held, 'decision holds', 'decisions hold')} for this page only`;
  if (s.lost > 0)
    return `${upper}. ${n(s.lost, 'decision', 'decisions')} saved in this browser ${s.lost === 1 ? 'is' : 'are'} gone from its storage; ${held}, ${saved}. There is no durable guarantee here until storage works again.`;
  return `${n(s.held, 'decision', 'decisions')} could not be saved — ${s.failure}; ${s.held === 1 ? 'it holds' : 'they hold'} for this page only (a reload forgets ${s.held === 1 ? 'it' : 'them'}). ${saved}. There is no durable guarantee here until storage works again.`;
}

/** The same page with another scope: switching scope is a fresh page (a fresh client). */
export function urlWithScope(href: string, next: StoreScope): string {
  // eslint-disable-next-line svelte/prefer-svelte-reactivity -- built and returned, never observed
  const url = new URL(href);
  url.searchParams.set('scope', next);
  return url.toString();
}

/** The request's own text, shown as text: it came from a server. */
export function requestText(p: SamplingParams): string {
  return p.messages
    .flatMap((m) => (Array.isArray(m.content) ? m.content : [m.content]))
    .map((b) => (b.type === 'text' && typeof b.text === 'string' ? b.text : `[${b.type}]`))
    .join('\n');
}

/**
 * One line on what happened to a request. A stored denial is replayed (no consent, no model
 * call); a stored approval still calls the model but asks nobody, so it is not "evaluated
 * afresh" either — `represented` counts the requests a stored decision has answered.
 */
export function summarise(a: AuditRecord): string {
  const how = a.replayed
    ? 'replayed from the store'
    : a.represented > 0 && !a.consentShown
      ? 'answered by the stored approval'
      : 'evaluated afresh';
  const reason = a.reason ? ` (${a.reason})` : '';
  const consent = a.consentShown ? 'shown' : 'not shown';
  return `${a.outcome}${reason} — ${how}, represented ${a.represented}, consent ${consent}`;
}

export class SingleRequestPage {
  scope = $state<StoreScope>('durable');
  server = $state('release-notes');
  prompt = $state('Summarise the release notes for version 2.3.');
  includeContext = $state<IncludeContext>('thisServer');
  storeNote = $state('');
  frame = $state<Frame | null>(null);
  /** What the server's SDK call gave for the latest request (a result, or the error it threw). */
  received = $state<Received | null>(null);
  summary = $state('');
  /** The state the latest request's machine is in, followed live through @xstate/svelte. */
  liveState = $state<string | null>(null);
  prompts = $state(0);
  stored = $state(0);
  /** Durable scope only: decisions on disk, held in memory only, and saved ones found gone. */
  saved = $state<number | null>(null);
  held = $state(0);
  lost = $state(0);
  /** Why storage stopped, in words; null while it works. */
  failure = $state<string | null>(null);
  retrying = $state(false);
  busy = $state(false);
  dialog = $state<{ input: ConsentInput; answer: (approved: boolean) => void } | null>(null);
  connection = $state(1);
  ready = $state(false);

  #deps: SingleRequestDeps;
  #host: ClientHost | null = null;
  #store: DecisionStore | null = null;
  #durable: CachedDurableStore | null = null;
  /** The open decisions database (replaced by a fresh connection after a loss). */
  #db: IdbStore | null = null;
  #unfollow: (() => void) | null = null;
  /** The MCP connection: an SDK server and client over the SDK's in-memory transport. */
  #pair: SdkPair | null = null;
  /** The latest request's counts refresh, once its frame is built. */
  #decided: Promise<void> | null = null;

  constructor(deps: SingleRequestDeps) {
    this.#deps = deps;
  }

  get connectionId(): string {
    return `${this.server}#${this.connection}`;
  }

  get #dbName(): string {
    return this.#deps.dbName ?? DEFAULT_DECISION_DB;
  }

  /** Open the decisions database within the time limit, and hear when it is taken away. */
  async #openDb(): Promise<OpenResult<IdbStore>> {
    const r = await openIdbStore(this.#dbName, DECISIONS_STORE, this.#deps.openSignal?.());
    if (r.ok) {
      this.#db = r.store;
      r.store.onLost((loss) => void this.#lost(r.store, loss));
    }
    return r;
  }

  async #openStore(wanted: StoreScope): Promise<DecisionStore> {
    if (wanted === 'durable') {
      const opened = await this.#openDb();
      const r = opened.ok
        ? await CachedDurableStore.attach(opened.store, this.#dbName, [], { writeThrough: true })
        : opened;
      if (r.ok) {
        this.storeNote = 'Decisions are stored durably in this browser (IndexedDB).';
        this.#durable = r.store;
        return r.store;
      }
      this.storeNote = `IndexedDB is not available (${r.error.replace(/\.$/, '')}). Decisions are kept for this connection only: there is no durable guarantee.`;
    } else {
      this.storeNote = 'Decisions live in memory on this connection and vanish when it closes.';
    }
    return new ConnectionDecisionStore();
  }

  /** Open the store the URL asks for and build the host. */
  async setup(search: string): Promise<void> {
    this.scope = scopeFromSearch(search);
    const store = await this.#openStore(this.scope);
    this.#store = store;
    const clock = this.#deps.clock;
    const provider = createProvider(DEFAULT_PROVIDER, clock, new Rng(1));
    this.#host = new ClientHost({
      config: resolveClientConfig({ store: store.scope }),
      policy: defaultPolicy(),
      cards: cardsByModel(DEFAULT_PROVIDER.cards),
      store,
      audit: new MemoryAuditLog(),
      clock,
      consent: (input, answer) => {
        this.prompts++;
        this.dialog = { input, answer };
        return () => (this.dialog = null);
      },
      provider: provider.source
    });
    this.#pair = await this.#connect();
    await this.refresh();
    this.ready = true;
  }

  /** The counts and, after a storage failure, what it means, in words. */
  async refresh(): Promise<void> {
    if (!this.#store) return;
    const durable = this.#durable;
    // What a lookup, a clear or an invalidation queued goes to disk before the counts are read, so
    // "saved" is what a reload finds (a failure here is held and said, never thrown).
    if (durable) await durable.flush();
    this.stored = await this.#store.count();
    if (!durable) return;
    const st = durable.status();
    this.saved = st.saved;
    this.held = st.heldInMemory;
    this.lost = st.lost;
    this.failure = st.failure?.words ?? null;
  }

  /**
   * The database was taken away from outside (another tab deleted it, the browser cleared the
   * site's data): the store stops writing and it is said at once; then what is left is read back
   * on a fresh connection and what was counted as saved and is gone is counted as lost — as the
   * playground's runs do (run-storage.ts).
   */
  async #lost(db: IdbStore, loss: StorageLoss): Promise<void> {
    const store = this.#durable;
    if (!store || !store.attachedTo(db)) return;
    store.lose(loss);
    await this.refresh();
    const fresh = await this.#openDb();
    await store.recount(fresh.ok ? fresh.store : null);
    await this.refresh();
  }

  /** Try storage again: on a fresh connection if the old one was lost, writing what is held. */
  async retryStorage(): Promise<void> {
    const store = this.#durable;
    if (!store) return;
    this.retrying = true;
    if (!this.#db || this.#db.lost()) await this.#openDb();
    if (this.#db && !store.attachedTo(this.#db)) store.reattach(this.#db);
    await store.retry();
    await this.refresh();
    this.retrying = false;
  }

  #connect(): Promise<SdkPair> {
    return openSdkPair(this.server, (params, extra) => this.#authorize(params, extra));
  }

  /**
   * Send one request from the form: the SDK server sends it, the SDK client hands it to the host;
   * the frame and a summary arrive when the machine finishes, what the server received after.
   */
  send(): void {
    const pair = this.#pair;
    if (!this.#host || !pair) return;
    this.busy = true;
    this.frame = null;
    this.summary = '';
    this.received = null;
    this.#decided = null;
    const params: SamplingParams = {
      systemPrompt: 'You summarise release notes.',
      messages: [{ role: 'user', content: { type: 'text', text: this.prompt } }],
      includeContext: this.includeContext,
      maxTokens: 200
    };
    void pair.request(params).then(async (r) => {
      this.received = r;
      await this.#decided;
      this.busy = false;
    });
  }

  /** The SDK client's `sampling/createMessage` handler: the host decides, its frame answers. */
  #authorize(
    params: SamplingParams,
    extra: { requestId: JsonRpcId; signal: AbortSignal }
  ): Promise<CreateMessageResult> {
    const host = this.#host!;
    return new Promise((resolve, reject) => {
      const handle = host.handle(
        {
          id: extra.requestId,
          server: this.server,
          connection: this.connectionId,
          params,
          receivedAt: this.#deps.clock.now()
        },
        (out) => {
          this.frame = out.frame;
          this.summary = summarise(out.audit);
          this.#decided = this.refresh();
          try {
            resolve(answerOf(out.frame));
          } catch (e) {
            reject(e);
          }
        }
      );
      // The server cancelled (its SDK's request timeout, say): the request still gets its frame.
      extra.signal.addEventListener('abort', () => handle.cancel(), { once: true });
      this.#unfollow?.();
      this.#unfollow = useSelector(handle.actor, (snap) => String(snap.value)).subscribe(
        (v) => (this.liveState = v)
      );
    });
  }

  answer(approved: boolean): void {
    const d = this.dialog;
    this.dialog = null;
    d?.answer(approved);
  }

  /** Close this connection (its connection-scoped decisions go with it) and open the next. */
  async reconnect(): Promise<void> {
    if (!this.#host) return;
    await this.#pair?.close();
    await this.#host.closeConnection(this.server, this.connectionId);
    this.connection++;
    this.#pair = await this.#connect();
    await this.refresh();
  }

  async clearStored(): Promise<void> {
    if (!this.#store) return;
    await this.#store.clear();
    await this.refresh();
  }

  dispose(): void {
    this.#unfollow?.();
    this.#unfollow = null;
    void this.#pair?.close();
    this.#pair = null;
  }
}
