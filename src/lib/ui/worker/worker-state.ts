/**
 * What the worker's modules share (sim.worker.ts is the entry): the session, the run's memory
 * budgets, the state of a reload's audit index being built again, and the command queue.
 */
import { Session } from '../../sim/session/session';
import { MAX_CHART_POINTS } from '../chart-thin';

export const session = new Session();
// A seek back or a fork re-simulates into a fresh namespace and shows the branch's own audit rows.
session.replayAudit = true;

/** The run's memory budgets (the page's `memoryBudget`: tests' knobs). */
export const budgets = {
  /**
   * Audit rows kept in memory only (storage failed, or none) at which a run stops rather than grow
   * until the tab crashes (issue #19): about 1 KB each, this is a few hundred MB.
   */
  maxHeld: 250_000,
  /** Chart points per lane sent to the page (chart-thin.ts). */
  chartPoints: MAX_CHART_POINTS
};

/**
 * A reload's audit index being built in the background (reindex.ts). `building`: until it is
 * (null: none). `waiting`: the run holds as many records as it may meanwhile and waits for it
 * (its snapshots say so).
 */
export const reindex: { building: Promise<void> | null; waiting: boolean } = {
  building: null,
  waiting: false
};

/** Commands, and live play's batches between them, are handled in order, one at a time. */
let queue = Promise.resolve();
export function enqueue(task: () => void | Promise<void>): void {
  queue = queue.then(task);
}
