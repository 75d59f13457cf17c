/**
 * The checker's tallies as results: one line per guarantee for the panel and the CLI ("664 of 664
 * requests answered"), the requests still in flight and those that waited too long, and the
 * lanes' counters held against the audit log.
 */
import { FOREIGN_REFUSALS, type DenialStyle } from '../../../machine/refusal-styles';
import type { LaneCounters } from '../../engine/metrics';
import {
  INVARIANTS,
  n,
  plural,
  Tally,
  type InvariantId,
  type InvariantResult,
  type Offender
} from './catalogue';
import { handoverSummary } from './handover';
import type { ByRequest } from '../requests';

/** A request the checker has seen arrive and not yet seen answered. */
export interface Pending {
  t: number;
  silence: boolean;
  seq: number | null;
  audited: boolean;
  tokensOut: number;
  /** The lane's refusal style, when it is not the lab's. */
  style?: DenialStyle;
  /** The audit record says the request was refused (a denial or a cost refusal). */
  refusal?: boolean;
  /** Its place among the requests in flight, in the order they arrived (the summary's order). */
  order: number;
  /**
   * Answered by a frame before its audit record (a break the checker has named): no longer in
   * flight for the checks, kept only for the limits its record is still judged by (guard.ts).
   */
  framed?: boolean;
}

/** What the checker has gathered so far: all {@link summarise} reads. */
export interface CheckerState {
  tallies: Readonly<Record<InvariantId, Tally>>;
  /** By lane, connection and id (requests.ts). */
  pending: ByRequest<Pending>;
  received: number;
  answered: number;
  silenced: number;
  /** Refusals sent in a real client's style, per lane. */
  foreign: ReadonlyMap<string, { style: DenialStyle; count: number }>;
  replays: number;
  same: { checked: number; problem: string | null } | null;
  /** The audit log's own totals per lane. */
  totals: ReadonlyMap<string, LaneCounters>;
  /** Whether frames are validated (without a validator, `frames-conform` is not reported). */
  validating: boolean;
}

/**
 * The guarantees as they stand at virtual time `now`. `counters` are the lanes' own counters
 * (held against the audit log); `stuckAfterMs` is how long a request may stay unanswered before
 * it counts as never answered (the machine's own timeouts bound every wait).
 */
export function summarise(
  s: CheckerState,
  now: number,
  counters: Record<string, LaneCounters>,
  stuckAfterMs: number
): InvariantResult[] {
  const out: InvariantResult[] = [];
  const t = s.tallies;
  // One frame: the requests still in flight, and those that waited too long.
  const frame = new Tally();
  frame.violations = t['one-frame'].violations;
  frame.offenders.push(...t['one-frame'].offenders);
  let inFlight = 0;
  const unanswered: { order: number; o: Offender }[] = [];
  for (const [lane, byConnection] of s.pending)
    for (const [connection, byId] of byConnection)
      for (const [id, p] of byId) {
        if (p.framed) continue;
        const o = { lane, seq: p.seq, request: `${connection}/${id}`, t: p.t };
        if (p.audited)
          unanswered.push({ order: p.order, o: { ...o, what: 'an audit record but no frame' } });
        else if (now - p.t > stuckAfterMs)
          unanswered.push({
            order: p.order,
            o: { ...o, what: `no answer after ${n(now - p.t)} ms` }
          });
        else inFlight++;
      }
  // Listed in the order the requests arrived, whatever lane and connection they are on.
  unanswered.sort((a, b) => a.order - b.order);
  for (const u of unanswered) frame.add(u.o);
  const decided = s.received - inFlight;
  const flight = inFlight ? ` (${n(inFlight)} in flight)` : '';
  out.push(
    frame.violations
      ? result(
          'one-frame',
          frame,
          decided,
          `${plural(frame.violations, 'request')} without exactly one frame${flight}`
        )
      : s.silenced
        ? {
            ...result(
              'one-frame',
              frame,
              decided,
              `${plural(s.silenced, 'request')} got no frame — silence is on${flight}`
            ),
            status: 'waived'
          }
        : result(
            'one-frame',
            frame,
            decided,
            `${n(s.answered)} of ${n(decided)} requests answered${flight}`
          )
  );
  const c = t['one-consent'];
  out.push(
    result(
      'one-consent',
      c,
      c.checked,
      c.violations
        ? `${plural(c.violations, 'consent dialog')} repeated within a store lifetime`
        : `${plural(c.checked, 'consent dialog')}, none repeated`
    )
  );
  const o = t['no-overdraw'];
  out.push(
    result(
      'no-overdraw',
      o,
      o.checked,
      o.violations
        ? `${plural(o.violations, 'window')} overdrawn`
        : `no window overdrawn (${plural(o.checked, 'window')} charged)`
    )
  );
  const l = t['call-within-limit'];
  out.push(
    result(
      'call-within-limit',
      l,
      l.checked,
      l.violations
        ? `${plural(l.violations, 'call')} over its limit`
        : l.checked
          ? `${n(l.checked)} of ${n(l.checked)} metered calls within their limit`
          : 'no metered calls'
    )
  );
  const tp = t['tokens-paid'];
  out.push(
    result(
      'tokens-paid',
      tp,
      tp.checked,
      `${n(tp.checked - tp.violations)} of ${n(tp.checked)} calls that generated tokens paid for them`
    )
  );
  const lf = t['loops-flagged'];
  out.push(
    result(
      'loops-flagged',
      lf,
      lf.checked,
      lf.checked
        ? `${n(lf.checked - lf.violations)} of ${n(lf.checked)} presentations in a retry loop flagged`
        : 'no retry loop yet'
    )
  );
  const r = t['replays-no-model'];
  out.push(
    result(
      'replays-no-model',
      r,
      r.checked,
      r.violations
        ? `${plural(r.violations, 'stored answer')} reached the user or the model`
        : `${plural(s.replays, 'stored denial')} sent, no model call; ${plural(r.checked - s.replays, 'completion')}, each its own call`
    )
  );
  const v = t['verdicts-only'];
  out.push(
    result(
      'verdicts-only',
      v,
      v.checked,
      `${n(v.checked - v.violations)} of ${n(v.checked)} stored decisions hold verdicts only`
    )
  );
  const dt = t['denials-true'];
  out.push(
    result(
      'denials-true',
      dt,
      dt.checked,
      dt.violations
        ? `${plural(dt.violations, 'denial')} claimed what was not so`
        : dt.checked
          ? `${n(dt.checked)} of ${n(dt.checked)} window claims true (exhausted windows, resets)`
          : 'no window claims yet'
    )
  );
  const h = t['no-future-decisions'];
  if (h.violations) out.push(result('no-future-decisions', h, h.checked, handoverSummary(h)));
  if (s.validating) {
    const f = t['frames-conform'];
    out.push(
      result(
        'frames-conform',
        f,
        f.checked,
        `${n(f.checked - f.violations)} of ${n(f.checked)} frames conform`
      )
    );
  }
  if (s.foreign.size) out.push(foreignResult(s.foreign));
  out.push(totalsResult(s, now, counters));
  if (s.same) {
    const bytes = new Tally();
    bytes.checked = 2;
    if (s.same.problem)
      bytes.add({ lane: '', seq: null, request: null, t: now, what: s.same.problem });
    out.push(
      result('same-bytes', bytes, 2, s.same.problem ?? 'two runs, byte-identical frames and audit')
    );
  }
  return out;
}

/**
 * Listed only when a lane refuses in a real client's style: given up on purpose, as silence gives
 * up the one frame, and said with what the server's SDK makes of the code.
 */
function foreignResult(
  foreign: ReadonlyMap<string, { style: DenialStyle; count: number }>
): InvariantResult {
  const t = new Tally();
  const parts: string[] = [];
  for (const [lane, { style, count }] of [...foreign].sort(([a], [b]) => a.localeCompare(b))) {
    if (style === 'lab') continue;
    const r = FOREIGN_REFUSALS[style];
    t.checked += count;
    parts.push(
      `lane ${lane} refuses like ${r.client} (${r.code}, no data): ${plural(count, 'refusal')} its servers see as ${r.serverSees}`
    );
  }
  return { ...result('refusals-typed', t, t.checked, parts.join('; ')), status: 'waived' };
}

function totalsResult(
  s: CheckerState,
  now: number,
  counters: Record<string, LaneCounters>
): InvariantResult {
  const tally = new Tally();
  for (const [lane, c] of Object.entries(counters)) {
    const a = s.totals.get(lane);
    tally.checked++;
    const pairs: [string, number, number][] = [
      ['consent prompts', c.consentPrompts, a?.consentPrompts ?? 0],
      ['dialogs skipped under askAbove', c.consentSkipped, a?.consentSkipped ?? 0],
      ['spend no person saw (µ$)', c.unaskedSpendMicros, a?.unaskedSpendMicros ?? 0],
      ['spend (µ$)', c.spendMicros, a?.spendMicros ?? 0],
      ['tokens in', c.tokensIn, a?.tokensIn ?? 0],
      ['tokens out', c.tokensOut, a?.tokensOut ?? 0],
      ['replays', c.replays, a?.replays ?? 0],
      ['fresh evaluations', c.fresh, a?.fresh ?? 0],
      ['silenced', c.silenced, a?.silenced ?? 0]
    ];
    for (const [o, x] of Object.entries(c.frames))
      pairs.push([`${o} frames`, x, a?.frames[o as keyof LaneCounters['frames']] ?? 0]);
    for (const [name, shown, logged] of pairs)
      if (shown !== logged)
        tally.add({
          lane,
          seq: null,
          request: null,
          t: now,
          what: `lane ${lane} shows ${n(shown)} ${name}, its audit log ${n(logged)}`
        });
  }
  return result(
    'totals-match',
    tally,
    tally.checked,
    tally.violations
      ? `${plural(tally.violations, 'counter')} differ from the audit log`
      : `every counter of ${plural(tally.checked, 'lane')} matches its audit log`
  );
}

function result(id: InvariantId, t: Tally, checked: number, summary: string): InvariantResult {
  return {
    id,
    title: INVARIANTS[id],
    status: t.violations ? 'broken' : 'held',
    summary,
    checked,
    violations: t.violations,
    offenders: t.offenders.slice()
  };
}
