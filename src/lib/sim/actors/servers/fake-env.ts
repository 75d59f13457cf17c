/**
 * A small fake ServerEnv for the behaviour tests: its own timer queue driven by a loop, a record
 * of every request sent (as written on the wire), the reports, and a responder the test writes
 * with the frames.ts builders. Not used by the product.
 */
import type { Frame, Money, SamplingParams } from '../../../machine/types';
import type { Protocol } from '../../../machine/vocabulary';
import { Rng } from '../../world/rng';
import type {
  ServerAgent,
  ServerEnv,
  ServerReport,
  ServerSpec,
  WireStyle
} from '../../world/world';
import { createServer } from './behaviours';
import { applyWireStyle } from './request';

export interface SentRequest {
  id: number;
  at: number;
  task: number;
  attempts: number;
  /** The params the server passed to `send`. */
  params: SamplingParams;
  /** The params as its serialiser wrote them (`applyWireStyle(params, wire)`). */
  wire: SamplingParams;
  style: WireStyle | undefined;
  connection: number;
}

/** A frame, silence (`null`), or a frame delivered after a delay. */
export type Reply = Frame | null | { frame: Frame; afterMs: number };
export type Responder = (req: SentRequest, index: number) => Reply;

export interface FakeRun {
  env: ServerEnv;
  agent: ServerAgent;
  sent: SentRequest[];
  reports: (ServerReport & { at: number })[];
  /** `disconnect@t` / `connect@t` events. */
  log: string[];
  /** Run timers up to and including virtual time `until`. */
  run(until: number): void;
  /** Run `fn` (the test's own action) after `ms`, in order with the server's timers. */
  later(ms: number, fn: () => void): number;
}

export interface FakeOptions {
  seed?: number;
  /** The revision the connection runs (default 2025-11-25). */
  protocol?: Protocol;
  /** 2026-07-28: the host calls the tool again this many times, this long after a failure. */
  hostRetries?: number;
  hostRetryDelayMs?: number;
  latencyMs?: number;
  ceiling?: Money | null;
}

export const SERVER = 'srv';

export function spec(behaviour: string, overrides: Partial<ServerSpec> = {}): ServerSpec {
  return {
    name: SERVER,
    behaviour,
    params: {},
    request: { prompt: 'Summarise ticket {n} for the release notes.', maxTokens: 256 },
    intervalMs: 60_000,
    tasks: 1,
    timeoutMs: 5000,
    ...overrides
  };
}

export function fakeRun(s: ServerSpec, responder: Responder, opts: FakeOptions = {}): FakeRun {
  let now = 0;
  let seq = 0;
  let nextTimer = 1;
  let nextId = 1;
  let connected = true;
  let connection = 1;
  const timers = new Map<number, { at: number; seq: number; fn: () => void }>();
  const sent: SentRequest[] = [];
  const reports: (ServerReport & { at: number })[] = [];
  const log: string[] = [];
  const latency = opts.latencyMs ?? 10;

  function later(ms: number, fn: () => void): number {
    const id = nextTimer++;
    timers.set(id, { at: now + Math.max(0, ms), seq: seq++, fn });
    return id;
  }

  const env: ServerEnv = {
    name: s.name,
    rng: new Rng(opts.seed ?? 42),
    now: () => now,
    schedule: (ms, timer) => later(ms, () => agent.onTimer(timer)),
    cancel(id) {
      timers.delete(id);
    },
    send(params, task, style) {
      if (!connected) return null;
      const id = nextId++;
      const req: SentRequest = {
        id,
        at: now,
        task: task.n,
        attempts: task.attempts,
        params,
        wire: applyWireStyle(params, style),
        style,
        connection
      };
      sent.push(req);
      const reply = responder(req, sent.length - 1);
      if (reply !== null) {
        const [frame, after] = 'frame' in reply ? [reply.frame, reply.afterMs] : [reply, latency];
        later(after, () => agent.onFrame(id, frame));
      }
      return id;
    },
    connected: () => connected,
    disconnect() {
      connected = false;
      log.push(`disconnect@${now}`);
    },
    connect() {
      connected = true;
      connection++;
      log.push(`connect@${now}`);
    },
    advertisedCeiling: () => opts.ceiling ?? null,
    protocol: () => opts.protocol ?? '2025-11-25',
    hostRetryAfterMs: (n) =>
      n <= (opts.hostRetries ?? 2) ? (opts.hostRetryDelayMs ?? 2000) : null,
    report(r) {
      reports.push({ ...r, at: now });
    }
  };
  const agent = createServer(env, s);

  function run(until: number): void {
    for (;;) {
      let best: [number, { at: number; seq: number; fn: () => void }] | null = null;
      for (const e of timers) {
        if (e[1].at > until) continue;
        if (
          best === null ||
          e[1].at < best[1].at ||
          (e[1].at === best[1].at && e[1].seq < best[1].seq)
        ) {
          best = e;
        }
      }
      if (best === null) break;
      timers.delete(best[0]);
      now = best[1].at;
      best[1].fn();
    }
    now = Math.max(now, until);
  }

  agent.start();
  return { env, agent, sent, reports, log, run, later };
}

/** The report types in order, e.g. `['task.started', 'retry', 'task.abandoned']`. */
export function kinds(run: FakeRun): string[] {
  return run.reports.map((r) => r.type);
}

/** The last report of a type. */
export function last<T extends ServerReport['type']>(
  run: FakeRun,
  type: T
): Extract<ServerReport, { type: T }> | undefined {
  const found = run.reports.filter((r) => r.type === type);
  return found[found.length - 1] as Extract<ServerReport, { type: T }> | undefined;
}
