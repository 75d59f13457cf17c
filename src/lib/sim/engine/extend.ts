/**
 * "Simulate N h" past the scenario's end: whether a run may go on, and the words for when it stops.
 * A run extended past its scenario's `durationMs` keeps the same population, arrivals and lanes
 * (servers with unbounded tasks keep sending); it stays within the bounds every scenario is held
 * to (limits.ts), so an extension cannot make a run larger than a scenario could have asked for.
 */
import { LIMITS } from '../input/limits';
import type { Scenario } from '../input/scenario';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** A span as the page writes it: "1 h", "90 min", "2 d 3 h", "45 s". */
export function formatSpan(ms: number): string {
  if (ms >= DAY) {
    const d = Math.floor(ms / DAY);
    const h = Math.round((ms - d * DAY) / HOUR);
    return h ? `${d} d ${h} h` : `${d} d`;
  }
  if (ms >= HOUR) {
    const h = Math.floor(ms / HOUR);
    const m = Math.round((ms - h * HOUR) / MINUTE);
    return m ? `${h} h ${m} min` : `${h} h`;
  }
  if (ms >= MINUTE) return `${Math.round(ms / MINUTE)} min`;
  return `${Math.round(ms / 1000)} s`;
}

/** Why a run of `scenario` cannot end at `end` (virtual epoch ms), or null when it can. */
export function extensionProblem(scenario: Scenario, end: number): string | null {
  const span = end - scenario.start;
  if (!Number.isFinite(span) || span <= 0) return 'the new end must be after the start';
  if (span > LIMITS.durationMs)
    return `a run may last at most ${formatSpan(LIMITS.durationMs)}; ${formatSpan(span)} is longer`;
  const samples = span / scenario.sampleMs;
  if (samples > LIMITS.samples)
    return `${formatSpan(span)} at one sample every ${scenario.sampleMs} ms is ${Math.ceil(samples)} samples per lane; the limit is ${LIMITS.samples}`;
  return null;
}

/** What "Simulate `ms` more" would do from `now` in a run ending at `end`. */
export interface FastForwardPlan {
  /** Where the fast-forward stops: `now + ms`, or the end when that comes first. */
  target: number;
  /** The end came first: the run stops short of what was asked. */
  clamped: boolean;
  /** Plain words for the page when clamped ("The scenario ends at 1 h: …"), else null. */
  message: string | null;
  /** The end that would let the whole span run (for an "Extend the run" button), or null. */
  extendTo: number | null;
}

export function planFastForward(
  scenario: Scenario,
  now: number,
  end: number,
  ms: number
): FastForwardPlan {
  const wanted = now + Math.max(0, ms);
  if (wanted <= end) return { target: wanted, clamped: false, message: null, extendTo: null };
  const at = formatSpan(end - scenario.start);
  const can = extensionProblem(scenario, wanted) === null;
  const left = end - now;
  const message =
    left <= 0
      ? `The scenario ends at ${at}; the run is there. ${can ? `Extend it to ${formatSpan(wanted - scenario.start)} to simulate ${formatSpan(ms)} more.` : 'It cannot be extended that far.'}`
      : `The scenario ends at ${at}: simulating ${formatSpan(left)} of the ${formatSpan(ms)} asked. ${can ? `Extend the run to ${formatSpan(wanted - scenario.start)} to simulate all of it.` : 'It cannot be extended that far.'}`;
  return { target: end, clamped: true, message, extendTo: can ? wanted : null };
}
