/**
 * Servers that read their frames: the well-behaved server and the three that share its reading of
 * a denial — the context-greedy summariser, the budget-aware shrinker and the timeout-sensitive
 * server. They differ in what they ask for and in how they treat cost refusals and silence.
 */
import { exactShrink, naiveShrinkInputTokens } from '../../../machine/budget';
import { copyable } from '../../../machine/clone';
import type { SamplingParams } from '../../../machine/types';
import type { ServerEnv, ServerSpec } from '../../world/world';
import { BaseServer, describeFailure, type Failure, type TaskState } from './base';
import type { BuildOptions } from './request';

export const WELL_BEHAVED_DEFAULTS: Record<string, unknown> = {
  /** Retries per task, transient denials, errors and silence together. */
  maxRetries: 1,
  /** The wait after a transient denial that names neither `retryAfterMs` nor `resetsAt`. */
  defaultRetryAfterMs: 1000,
  /** The wait before retrying after a transport or provider error, or silence. */
  backoffMs: 1000
};

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * Honours the frame: uses a completion (and says so when it was trimmed); on a permanent denial
 * it degrades and says so; a transient denial is retried once after `retryAfterMs` (or at
 * `resetsAt`); a cost refusal ends the task; a transport/provider error or silence — the
 * ambiguous non-answer — is retried once after `backoffMs`.
 */
export class WellBehaved extends BaseServer {
  constructor(env: ServerEnv, spec: ServerSpec, defaults = WELL_BEHAVED_DEFAULTS) {
    super(env, spec, defaults);
  }

  protected onFailure(s: TaskState, f: Failure): void {
    this.politely(s, f);
  }

  /** Retries a task gets for transient denials, errors and silence together. */
  protected politeCap(): number {
    return this.p.cap('maxRetries');
  }

  /** How long a transient denial asks to wait: `retryAfterMs`, else until `resetsAt`. */
  protected transientDelay(f: Extract<Failure, { kind: 'denied' }>): number {
    if (f.retryAfterMs !== undefined) return f.retryAfterMs;
    const reset = f.resetsAt === undefined ? NaN : Date.parse(f.resetsAt);
    if (Number.isFinite(reset)) return Math.max(0, reset - this.env.now());
    return this.p.num('defaultRetryAfterMs');
  }

  protected politely(s: TaskState, f: Failure): void {
    if (f.kind === 'denied' && !f.retryable) {
      const resets = f.resetsAt === undefined ? '' : `; resets at ${f.resetsAt}`;
      return this.abandon(s, `${describeFailure(f)}: degraded, told the user${resets}`);
    }
    if (f.kind === 'budget_exceeded') {
      return this.abandon(s, 'budget_exceeded: over the host cost cap, not retried');
    }
    const used = this.count(s, 'polite');
    if (used >= this.politeCap()) {
      return this.abandon(
        s,
        `${describeFailure(f)}; gave up after ${plural(used, 'retry', 'retries')}`
      );
    }
    this.bump(s, 'polite');
    this.retryAfter(s, f.kind === 'denied' ? this.transientDelay(f) : this.p.num('backoffMs'));
  }
}

/**
 * A summariser that always asks for `includeContext: 'allServers'`, whatever its template says.
 * Told that its result was trimmed (`_meta.context`), it says the summary was generated without
 * access to session context; told nothing, it presents a confident summary (`unawareOfTrim`).
 * Denials it reads like the well-behaved server.
 */
export class ContextGreedy extends WellBehaved {
  constructor(env: ServerEnv, spec: ServerSpec) {
    super(env, { ...spec, request: { ...spec.request, includeContext: 'allServers' } });
  }
}

const SHRINK_MODES = ['naive', 'exact'] as const;

export const BUDGET_SHRINKER_DEFAULTS: Record<string, unknown> = {
  ...WELL_BEHAVED_DEFAULTS,
  /** `naive`: input × limit / estimate (the RFC's "~48 %"); `exact`: from the meter basis. */
  mode: 'naive',
  /** Shrunk retries per task; a refusal after the last one ends the task. */
  maxShrinks: 1,
  /** Ask for exactly the advertised ceiling (`budget.intent.maxCost`) when the host has one. */
  useCeiling: true
};

/**
 * Reads the RFC's decision basis on `budget_exceeded` and shrinks its input deterministically,
 * then retries (once by default). `naive` scales the input by limit / estimate — but only the
 * input shrinks, the output side (maxTokens) does not, so the retry is refused again; `exact`
 * solves for the largest input that fits from the meter basis. When the host advertises a
 * per-call ceiling it asks for exactly that much (the RFC's open question). Other failures it
 * reads like the well-behaved server.
 */
export class BudgetShrinker extends WellBehaved {
  constructor(env: ServerEnv, spec: ServerSpec) {
    super(env, spec, BUDGET_SHRINKER_DEFAULTS);
    this.p.oneOf('mode', SHRINK_MODES);
  }

  protected override paramsFor(n: number, opts?: BuildOptions): SamplingParams {
    const params = super.paramsFor(n, opts);
    const ceiling = this.env.advertisedCeiling();
    if (ceiling !== null && this.p.bool('useCeiling')) {
      const maxCost = { amount: ceiling.amount, currency: ceiling.currency };
      const onExceeded = params.budget?.onExceeded ?? 'reject';
      // A copy: built params are shared (request.ts memoises them), and the ceiling is this lane's.
      return { ...params, budget: { intent: { ...params.budget?.intent, maxCost }, onExceeded } };
    }
    return params;
  }

  protected override onFailure(s: TaskState, f: Failure): void {
    if (f.kind !== 'budget_exceeded') return this.politely(s, f);
    const shrunk = s.tally['shrunkTo'];
    if (this.count(s, 'shrinks') >= this.p.cap('maxShrinks')) {
      const at = shrunk === undefined ? '' : ` at ${shrunk} input tokens`;
      return this.abandon(s, `budget_exceeded again${at}; gave up`);
    }
    const decision = f.decision;
    if (decision === null) return this.abandon(s, 'budget_exceeded without a decision basis');
    const mode = this.p.oneOf('mode', SHRINK_MODES);
    let target: number;
    if (mode === 'naive') {
      const n = naiveShrinkInputTokens(decision);
      if (n === null) return this.abandon(s, 'budget_exceeded: unreadable limit or estimate');
      target = n;
    } else {
      const r = exactShrink(decision);
      if (!r.ok) return this.abandon(s, `budget_exceeded: cannot shrink (${r.error})`);
      target = r.inputTokens;
    }
    if (target >= decision.estimatedTokens.input) {
      return this.abandon(s, 'budget_exceeded: shrinking the input cannot help');
    }
    this.bump(s, 'shrinks');
    s.tally['shrunkTo'] = target;
    s.params = this.paramsFor(s.task.n, { inputTokens: target });
    this.retryAfter(s, 0);
  }
}

export const TIMEOUT_SENSITIVE_DEFAULTS: Record<string, unknown> = {
  ...WELL_BEHAVED_DEFAULTS,
  /** The wait after a timeout before sending again. */
  retryDelayMs: 500,
  /** Retries after silence, per task. */
  maxRetries: 30
};

/**
 * Treats silence as a dropped frame and sends again after `retryDelayMs`, up to `maxRetries`
 * times; an explicit denial frame it reads like the well-behaved server (one retry for a
 * transient denial, none for a permanent one). With a denial frame it stops; with silence it
 * keeps asking.
 */
export class TimeoutSensitive extends WellBehaved {
  constructor(env: ServerEnv, spec: ServerSpec) {
    super(env, spec, TIMEOUT_SENSITIVE_DEFAULTS);
  }

  /** One polite retry, as the well-behaved server; `maxRetries` counts retries after silence. */
  protected override politeCap(): number {
    return 1;
  }

  protected override onFailure(s: TaskState, f: Failure): void {
    if (f.kind !== 'timeout') return this.politely(s, f);
    const used = this.count(s, 'silence');
    if (used >= this.p.cap('maxRetries')) {
      return this.abandon(s, `no answer after ${plural(used, 'retry', 'retries')}; gave up`);
    }
    this.bump(s, 'silence');
    this.retryAfter(s, this.p.num('retryDelayMs'));
  }
}

// Each behaviour is copied (and saved) under its own name, by its base's rules (base.ts).
copyable(WellBehaved, { name: 'servers.WellBehaved' });
copyable(ContextGreedy, { name: 'servers.ContextGreedy' });
copyable(BudgetShrinker, { name: 'servers.BudgetShrinker' });
copyable(TimeoutSensitive, { name: 'servers.TimeoutSensitive' });
