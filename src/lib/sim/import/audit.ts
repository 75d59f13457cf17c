/**
 * The lab's own audit JSONL (the handler's `audit` file, a run's `audit.jsonl`, the page's
 * export): one decided request a line, checked as the audit import checks it.
 *
 * An audit record does not carry the request's params, only their identity and sizes, so the
 * trace gets params made from them: one text per identity (two records with one identity get the
 * same params, and so one identity again on replay), as long as the policy's own input estimate
 * (its budget decision's, else the provider's count), `maxTokens` from the estimate's output
 * (else the tokens the model wrote), `includeContext` as requested and the model it was served
 * by as a hint. What the policy decides from those — consent, rate, budget, context, models,
 * repeats of one identity — replays as it was; a rule on the prompt's words does not.
 *
 * Each record's verdict then goes on its request as `logged` (`audit`: outcome, reason, consent
 * shown, cost, alert); a shadow-mode record (`shadow`) was served whatever its verdict said.
 */
import { CODES, type AuditRecord, type SamplingParams } from '../../machine/types';
import { validateAuditRecord } from '../../store/audit-export';
import { LIMITS } from '../input/limits';
import type { Logged } from '../input/trace';
import type { Assembler, Where } from './assemble';

const SERVED = new Set(['allowed', 'trimmed', 'budget_exhausted']);

/** True when a parsed line looks like an audit record (for format detection). */
export function isAuditRecord(v: unknown): boolean {
  return (
    typeof v === 'object' &&
    v !== null &&
    'seq' in v &&
    'identity' in v &&
    'outcome' in v &&
    'consentShown' in v
  );
}

/** What the client answered, as its audit record says. */
function loggedOf(r: AuditRecord, shadow: boolean): Logged {
  const audit: NonNullable<Logged['audit']> = {
    outcome: r.outcome,
    reason: r.reason,
    consentShown: r.consentShown,
    cost: r.cost,
    currency: r.currency,
    alert: r.alert
  };
  if (shadow) audit.shadow = true;
  const t = r.durationMs >= 0 && r.durationMs <= LIMITS.spanMs ? { afterMs: r.durationMs } : {};
  if (shadow || SERVED.has(r.outcome)) {
    const result: NonNullable<Logged['result']> = {};
    if (r.model) result.model = r.model;
    if (!shadow && r.outcome === 'budget_exhausted') result.stopReason = 'budget_exhausted';
    if (!shadow && r.outcome === 'trimmed') result.trimmed = true;
    return { response: 'result', ...t, result, audit };
  }
  if (r.outcome === 'budget_exceeded') {
    const result: NonNullable<Logged['result']> = { stopReason: 'budget_exceeded' };
    if (r.model) result.model = r.model;
    return { response: 'result', ...t, result, audit };
  }
  const code =
    r.outcome === 'transport_error'
      ? CODES.requestTimeout
      : r.outcome === 'provider_error'
        ? CODES.internal
        : CODES.denied;
  const error: NonNullable<Logged['error']> = { code };
  if (r.reason) error.message = r.reason;
  return { response: 'error', ...t, error, audit };
}

interface Known {
  input: number;
  output: number;
  model: string | null;
  context: AuditRecord['contextRequested'];
  events: { params?: SamplingParams }[];
}

/** Reads audit lines; `finish` makes each identity's params once everything about it is known. */
export class AuditLines {
  readonly #byIdentity = new Map<string, Known>();
  #lane: string | undefined;

  constructor(readonly a: Assembler) {}

  line(text: string, where: Where): void {
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (e) {
      return this.a.skip(where, `not valid JSON (${(e as Error).message}): cut off?`);
    }
    const checked = validateAuditRecord(raw);
    if (!checked.ok) return this.a.skip(where, `not an audit record: ${checked.error}`);
    const r = checked.record;
    // A run's audit.jsonl holds both lanes' records of the same traffic: the first lane's is read.
    if (r.lane !== undefined) {
      this.#lane ??= r.lane;
      if (r.lane !== this.#lane)
        return this.a.skip(
          where,
          `a record of lane ${r.lane}: only lane ${this.#lane}'s are read (the same traffic, decided again)`
        );
    }
    const shadow =
      typeof raw === 'object' && raw !== null && 'shadow' in raw && raw.shadow !== undefined;
    const event = this.a.decided(
      r.server,
      r.connection,
      r.t,
      PLACEHOLDER,
      loggedOf(r, shadow),
      where
    );
    if (!event) return;
    const key = `${r.server}\u0000${r.identity}`;
    let k = this.#byIdentity.get(key);
    if (!k) {
      k = { input: 0, output: 0, model: null, context: r.contextRequested, events: [] };
      this.#byIdentity.set(key, k);
    }
    const b = r.budgetDecision;
    k.input = Math.max(k.input, b ? b.estimatedTokens.input : r.tokensIn);
    k.output = Math.max(k.output, b ? b.estimatedTokens.output : r.tokensOut);
    k.model ??= r.model;
    k.events.push(event);
  }

  /** Give every imported request its identity's params. */
  finish(): void {
    for (const [key, k] of this.#byIdentity) {
      const identity = key.slice(key.indexOf('\u0000') + 1);
      const head = `Request ${identity}, imported from the lab's audit log.`;
      // inputTokensOf counts ceil(chars / 4): pad to the estimate the policy saw.
      const chars = Math.min(4 * k.input, 4 * LIMITS.tokens);
      const text = head.length >= chars ? head : head + ' '.repeat(chars - head.length);
      const params: SamplingParams = {
        messages: [{ role: 'user', content: { type: 'text', text } }],
        maxTokens: Math.min(LIMITS.tokens, Math.max(1, k.output)),
        ...(k.context !== 'none' ? { includeContext: k.context } : {}),
        ...(k.model ? { modelPreferences: { hints: [{ name: k.model }] } } : {})
      };
      for (const e of k.events) e.params = params;
    }
  }
}

const PLACEHOLDER: SamplingParams = {
  messages: [{ role: 'user', content: { type: 'text', text: '' } }],
  maxTokens: 1
};
