/**
 * A run is never handed stored decisions from after its clock (issue #18): a store the run is
 * given already holding decisions — a reload's durable namespace, handed over at the virtual time
 * the run resumes — must hold only decisions decided at or before that time. A decision from
 * later belongs to a future this run has not lived: replaying it answers a request with a verdict
 * nobody gave yet (a reload after the end once put a fresh clock over the whole run's decisions,
 * and lane B replayed 663 times with 0 prompts).
 *
 * Listed only when broken. A reload hands its run the namespace once; a re-simulation of the
 * same timeline (a seek back before it) keeps durable decisions in a fresh namespace and hands
 * nothing over — listed whenever checked, the same run would show the line or not depending on
 * how it was re-created, and a copy restored from a checkpoint would differ from the run
 * re-simulated (timetravel-fuzz.spec.ts holds the two equal).
 */
import type { StoredDecision } from '../../../machine/types';
import { n, plural, type Tally } from './catalogue';

/** A store handed to `lane` at virtual time `t`, holding `held`. */
export function checkHandover(
  tally: Tally,
  lane: string,
  t: number,
  held: readonly StoredDecision[]
): void {
  for (const d of held) {
    tally.checked++;
    if (d.decidedAt > t)
      tally.add({
        lane,
        seq: null,
        request: null,
        t,
        what: `the store handed over at ${new Date(t).toISOString()} holds the decision for ${d.identity}, decided ${n(d.decidedAt - t)} ms later`
      });
  }
}

/** The panel's and the CLI's line for it (when broken: see the module comment). */
export function handoverSummary(tally: Tally): string {
  return `${n(tally.violations)} of ${plural(tally.checked, 'stored decision')} handed over were decided after the run's clock`;
}
