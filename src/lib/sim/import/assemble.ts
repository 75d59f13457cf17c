/**
 * From the messages a log shows to a trace (`trace.ts`): the one place that pairs requests with
 * their responses and infers connections, whatever the log's format. The format readers
 * (`claude.ts`, `inspector.ts`, `ndjson.ts`, `audit.ts`) turn each line or entry into a
 * {@link Wire} message or a lifecycle mark; this assembles them.
 *
 * Rules:
 * - Pairing is by JSON-RPC id **per connection**: a response on a later connection never answers
 *   a request of an earlier one (a process restart reuses ids from 0).
 * - A connection starts at a lifecycle line that says so, or at the client's `initialize`; an
 *   `initialize` on a connection that already had one is a restart the log did not mark (the old
 *   connection closes first). A message on a server with no connection opens one (the log began
 *   mid-session). A connection ends at a lifecycle line that says so.
 * - In sampling the server asks and the client answers: a `sampling/createMessage` request comes
 *   from the server, and its answer (`result` or `error`) from the client. Each request keeps
 *   its params, its time and what the log shows happened to it (`logged`); a request left
 *   unanswered when its connection ends, or when the log ends, is logged as `none`.
 *
 * Pure: no Node APIs, no clock. Times are the log's own (epoch ms), made relative at the end.
 *
 * Over 400 lines on purpose: one pairing state (connections, pending ids) that every rule edits.
 */
import { quote } from '../../machine/excerpt';
import type { SamplingParams } from '../../machine/types';
import { LIMITS } from '../input/limits';
import { traceEventProblem, type Logged, type TraceEvent } from '../input/trace';

export type ImportFormat = 'claude' | 'inspector' | 'ndjson' | 'audit';
export const IMPORT_FORMATS: readonly ImportFormat[] = ['claude', 'inspector', 'ndjson', 'audit'];

/** Where in the input a thing was read: a file and its line (or, for a JSON array, its entry). */
export interface Where {
  file: string;
  line: number;
  /** An Inspector export's array index (0-based); `line` is then the line the entry starts on. */
  entry?: number;
}

/** One line (or entry) the import did not use, and why. */
export interface Skip extends Where {
  why: string;
}

/** One JSON-RPC message as a log shows it. */
export interface Wire {
  /** Epoch ms of the log line, or null when the log has no times (a raw capture). */
  t: number | null;
  server: string;
  /** Who sent it, when the log says; null: inferred from the message. */
  from: 'client' | 'server' | null;
  message: unknown;
  where: Where;
}

export interface ServerSummary {
  name: string;
  connections: number;
  sampling: number;
  responses: { result: number; error: number; none: number };
  /** Epoch ms (or the log's own clock) of its first and last event. */
  first: number;
  last: number;
}

export interface ImportReport {
  files: { file: string; format: ImportFormat; lines: number }[];
  servers: ServerSummary[];
  /** JSON-RPC messages read (every direction and kind). */
  messages: number;
  /** Lifecycle lines read (started, transport closed, …). */
  lifecycle: number;
  connections: number;
  /** Of the connections: those the log did not mark, inferred from an `initialize` or a message. */
  inferredConnections: number;
  sampling: number;
  responses: { result: number; error: number; none: number };
  /** Error responses to sampling requests by JSON-RPC code. */
  errorCodes: Record<string, number>;
  skipped: number;
  /** The first {@link MAX_SKIPS_KEPT} skipped lines; `skipped` counts them all. */
  skips: Skip[];
  /** Epoch ms of the trace's `t: 0`, or null when the log has no times. */
  start: number | null;
  spanMs: number;
}

export type ImportResult =
  { ok: true; events: TraceEvent[]; report: ImportReport } | { ok: false; error: string };

/** Skipped lines kept with their reason; the rest are counted. */
export const MAX_SKIPS_KEPT = 1_000;
/** Requests awaiting an answer on one connection: past this the oldest is dropped. */
const MAX_PENDING = 10_000;
/** The most events an import makes: the trace reader's own bound. */
export const MAX_IMPORT_EVENTS = 200_000;

const SAMPLING = 'sampling/createMessage';
/** Requests only a server sends (the client's own features). */
const SERVER_METHODS = /^(sampling\/|elicitation\/|roots\/list$)/;

interface Pending {
  event: TraceEvent;
  abs: number;
}

interface ServerState {
  name: string;
  connected: boolean;
  initialized: boolean;
  conn: number;
  /** The audit's connection name of the open connection. */
  auditConnection?: string;
  sampling: Map<string, Pending>;
  /** Other requests awaiting an answer, by who asked. */
  fromClient: Map<string, string>;
  fromServer: Map<string, string>;
  summary: ServerSummary;
}

interface Placed {
  abs: number;
  seq: number;
  event: TraceEvent;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function idKey(id: unknown): string | null {
  if (typeof id === 'string') return `s:${id}`;
  if (typeof id === 'number' && Number.isFinite(id)) return `n:${id}`;
  return null;
}

function idText(id: unknown): string {
  return typeof id === 'string' ? quote(id) : String(id);
}

/** Put at most `max` entries in a map, dropping the oldest. */
function bounded<V>(m: Map<string, V>, k: string, v: V, max = MAX_PENDING): void {
  m.delete(k);
  m.set(k, v);
  if (m.size > max) m.delete(m.keys().next().value!);
}

export class Assembler {
  readonly #servers = new Map<string, ServerState>();
  readonly #events: Placed[] = [];
  readonly #files: ImportReport['files'] = [];
  readonly #skips: Skip[] = [];
  #skipped = 0;
  #messages = 0;
  #lifecycle = 0;
  #inferred = 0;
  #errorCodes: Record<string, number> = {};
  #seq = 0;
  /** Characters of the sampling params kept: the trace's own bound on its text. */
  #chars = 0;
  /** The last time seen: a line without one happens then. */
  #lastT: number | null = null;
  #timed = false;
  #error: string | null = null;

  /** The first error that stops the import (too many events or servers), if any. */
  get error(): string | null {
    return this.#error;
  }

  file(file: string, format: ImportFormat, lines: number): void {
    this.#files.push({ file, format, lines });
  }

  skip(where: Where, why: string): void {
    this.#skipped++;
    if (this.#skips.length < MAX_SKIPS_KEPT) this.#skips.push({ ...where, why });
  }

  /** Servers named so far (a reader may keep a server's lines to the first file naming it). */
  has(server: string): boolean {
    return this.#servers.has(server);
  }

  #time(t: number | null): number {
    if (t !== null) {
      this.#timed = true;
      this.#lastT = t;
      return t;
    }
    return this.#lastT ?? 0;
  }

  #server(name: string, where: Where): ServerState | null {
    let s = this.#servers.get(name);
    if (!s) {
      if (this.#servers.size >= LIMITS.traceServers) {
        this.#error ??= `${where.file}: line ${where.line}: a trace may name at most ${LIMITS.traceServers} distinct servers`;
        return null;
      }
      s = {
        name,
        connected: false,
        initialized: false,
        conn: 0,
        sampling: new Map(),
        fromClient: new Map(),
        fromServer: new Map(),
        summary: {
          name,
          connections: 0,
          sampling: 0,
          responses: { result: 0, error: 0, none: 0 },
          first: Infinity,
          last: -Infinity
        }
      };
      this.#servers.set(name, s);
    }
    return s;
  }

  #place(s: ServerState, abs: number, event: TraceEvent): void {
    if (this.#events.length >= MAX_IMPORT_EVENTS) {
      this.#error ??= `the log makes more than ${MAX_IMPORT_EVENTS.toLocaleString('en-US')} trace events, the limit of a trace`;
      return;
    }
    this.#events.push({ abs, seq: this.#seq++, event });
    s.summary.first = Math.min(s.summary.first, abs);
    s.summary.last = Math.max(s.summary.last, abs);
  }

  /** The connection's unanswered sampling requests are logged as having had no answer. */
  #close(s: ServerState): void {
    for (const p of s.sampling.values()) this.#answered(s, p, { response: 'none' });
    s.sampling.clear();
    s.fromClient.clear();
    s.fromServer.clear();
  }

  #answered(s: ServerState, p: Pending, logged: Logged): void {
    p.event.logged = logged;
    s.summary.responses[logged.response]++;
    if (logged.error) {
      const code = String(logged.error.code);
      this.#errorCodes[code] = (this.#errorCodes[code] ?? 0) + 1;
    }
  }

  #open(s: ServerState, abs: number, inferred: boolean): void {
    if (s.connected) this.#disconnect(s, abs);
    s.connected = true;
    s.initialized = false;
    s.conn++;
    s.summary.connections++;
    if (inferred) this.#inferred++;
    this.#place(s, abs, { t: 0, server: s.name, type: 'connect' });
  }

  #disconnect(s: ServerState, abs: number): void {
    if (!s.connected) return;
    this.#close(s);
    s.connected = false;
    this.#place(s, abs, { t: 0, server: s.name, type: 'disconnect' });
  }

  /** A lifecycle line: the server's transport opened (`connect`), closed, or neither (`info`). */
  lifecycle(
    server: string,
    t: number | null,
    kind: 'connect' | 'disconnect' | 'info',
    where: Where
  ) {
    const s = this.#server(server, where);
    if (!s) return;
    this.#lifecycle++;
    const abs = this.#time(t);
    if (kind === 'connect') this.#open(s, abs, false);
    else if (kind === 'disconnect') this.#disconnect(s, abs);
  }

  /** A request with id the log shows: the sampling requests are kept as trace events. */
  message(w: Wire): void {
    const m = w.message;
    if (!isObject(m)) return this.skip(w.where, 'not a JSON-RPC message (not an object)');
    const hasMethod = typeof m.method === 'string';
    const hasAnswer = Object.hasOwn(m, 'result') || Object.hasOwn(m, 'error');
    const key = idKey(m.id);
    if (hasMethod && hasAnswer)
      return this.skip(w.where, 'not a JSON-RPC message (a method and a result or error)');
    if (!hasMethod && !hasAnswer)
      return this.skip(w.where, 'not a JSON-RPC message (no method, result or error)');
    if (hasAnswer && key === null)
      return this.skip(w.where, `a response whose id is ${idText(m.id)}, not a string or number`);
    const s = this.#server(w.server, w.where);
    if (!s) return;
    const abs = this.#time(w.t);
    this.#messages++;
    if (hasMethod) {
      const method = m.method as string;
      const from = w.from ?? (SERVER_METHODS.test(method) ? 'server' : 'client');
      if (method === 'initialize' && from === 'client') {
        // A second initialize on one connection: the process restarted and the log did not say.
        if (!s.connected || s.initialized) this.#open(s, abs, true);
        s.initialized = true;
      } else if (!s.connected) this.#open(s, abs, true);
      if (key === null) return; // a notification
      if (from === 'server' && method === SAMPLING) return this.#sampling(s, m, key, abs, w.where);
      bounded(from === 'client' ? s.fromClient : s.fromServer, key, method);
      return;
    }
    if (!s.connected) {
      this.#messages--;
      return this.skip(
        w.where,
        `a response to id ${idText(m.id)} with no connection open (its request was on a connection the log closed)`
      );
    }
    const from = w.from ?? this.#answerFrom(s, key!, m);
    if (from === 'client') {
      const p = s.sampling.get(key!);
      if (p) {
        s.sampling.delete(key!);
        return this.#answer(s, p, m, abs, w.where);
      }
      if (s.fromServer.delete(key!)) return;
    } else if (s.fromClient.delete(key!)) return;
    this.#messages--;
    this.skip(
      w.where,
      `a response to id ${idText(m.id)} that no request on this connection (${s.name} #${s.conn}) is waiting for`
    );
  }

  /** Who answered: the side whose peer has a request of that id waiting; a sampling result by its shape. */
  #answerFrom(s: ServerState, key: string, m: Record<string, unknown>): 'client' | 'server' {
    const client = s.sampling.has(key) || s.fromServer.has(key);
    const server = s.fromClient.has(key);
    if (client && !server) return 'client';
    if (server && !client) return 'server';
    if (client && server) {
      const r = m.result;
      return isObject(r) && 'model' in r && 'role' in r ? 'client' : 'server';
    }
    return 'server';
  }

  #sampling(
    s: ServerState,
    m: Record<string, unknown>,
    key: string,
    abs: number,
    where: Where
  ): void {
    const event: TraceEvent = {
      t: 0,
      server: s.name,
      type: 'request',
      params: m.params as SamplingParams
    };
    const problem = traceEventProblem(event);
    if (problem) {
      this.#messages--;
      return this.skip(where, `a sampling/createMessage request the lab cannot replay: ${problem}`);
    }
    this.#chars += JSON.stringify(event.params).length;
    if (this.#chars > LIMITS.traceChars) {
      this.#error ??= `${where.file}: line ${where.line}: the sampling requests so far hold more than ${LIMITS.traceChars / 1e6} million characters, the limit of a trace`;
      return;
    }
    const before = s.sampling.get(key);
    if (before) this.#answered(s, before, { response: 'none' });
    if (s.sampling.size >= MAX_PENDING && !before) {
      const [oldKey, old] = s.sampling.entries().next().value!;
      s.sampling.delete(oldKey);
      this.#answered(s, old, { response: 'none' });
    }
    s.sampling.set(key, { event, abs });
    s.summary.sampling++;
    this.#place(s, abs, event);
  }

  #answer(s: ServerState, p: Pending, m: Record<string, unknown>, abs: number, where: Where) {
    const t = { afterMs: Math.max(0, abs - p.abs) };
    if (Object.hasOwn(m, 'result')) {
      const r = m.result;
      if (!isObject(r)) {
        this.#answered(s, p, { response: 'none' });
        return this.skip(where, 'a sampling answer whose result is not an object');
      }
      const result: NonNullable<Logged['result']> = {};
      if (typeof r.model === 'string') result.model = r.model.slice(0, 200);
      if (typeof r.stopReason === 'string') result.stopReason = r.stopReason.slice(0, 200);
      if (isObject(r._meta) && isObject(r._meta.context)) result.trimmed = true;
      return this.#answered(s, p, { response: 'result', ...t, result });
    }
    const e = m.error;
    if (!isObject(e) || !Number.isInteger(e.code)) {
      this.#answered(s, p, { response: 'none' });
      return this.skip(where, 'a sampling answer whose error has no integer code');
    }
    const error: NonNullable<Logged['error']> = { code: e.code as number };
    if (typeof e.message === 'string') error.message = e.message.slice(0, 10_000);
    if (e.data !== undefined) error.data = e.data;
    const logged: Logged = { response: 'error', ...t, error };
    // An error's data is the client's: checked as the trace reader will check it.
    if (traceEventProblem({ ...p.event, logged })) delete error.data;
    this.#answered(s, p, logged);
  }

  /** The lab's own audit: a request already decided, placed with its verdict then. */
  decided(
    server: string,
    connection: string,
    t: number,
    params: SamplingParams,
    logged: Logged,
    where: Where
  ): TraceEvent | null {
    const s = this.#server(server, where);
    if (!s) return null;
    const abs = this.#time(t);
    this.#messages++;
    if (!s.connected || s.auditConnection !== connection) {
      this.#open(s, abs, false);
      s.auditConnection = connection;
    }
    const event: TraceEvent = { t: 0, server, type: 'request', params };
    s.summary.sampling++;
    this.#place(s, abs, event);
    this.#answered(s, { event, abs }, logged);
    return event;
  }

  /** The trace (times relative to the first event), and the report; or the error that stopped it. */
  finish(): ImportResult {
    for (const s of this.#servers.values()) this.#close(s);
    if (this.#error) return { ok: false, error: this.#error };
    const events = this.#events.sort((a, b) => a.abs - b.abs || a.seq - b.seq);
    const start = events.length ? events[0]!.abs : 0;
    const end = events.length ? events.at(-1)!.abs : 0;
    if (end - start > LIMITS.spanMs)
      return {
        ok: false,
        error: `the log spans ${Math.round((end - start) / 86_400_000)} days; a trace may span at most ${LIMITS.spanMs / 86_400_000}`
      };
    for (const p of events) p.event.t = p.abs - start;
    let responses = { result: 0, error: 0, none: 0 };
    let sampling = 0;
    let connections = 0;
    const servers = [...this.#servers.values()].map((s) => s.summary);
    for (const s of servers) {
      sampling += s.sampling;
      connections += s.connections;
      responses = {
        result: responses.result + s.responses.result,
        error: responses.error + s.responses.error,
        none: responses.none + s.responses.none
      };
    }
    return {
      ok: true,
      events: events.map((p) => p.event),
      report: {
        files: this.#files,
        servers,
        messages: this.#messages,
        lifecycle: this.#lifecycle,
        connections,
        inferredConnections: this.#inferred,
        sampling,
        responses,
        errorCodes: this.#errorCodes,
        skipped: this.#skipped,
        skips: this.#skips,
        start: this.#timed && events.length ? start : null,
        spanMs: end - start
      }
    };
  }
}
