/**
 * What a long run gave up to stay within its memory budgets, in plain words for the page (issue
 * #19: a simulated week crashed the tab without a word). The numbers shown are never coarsened:
 * only how a seek back gets there, and how finely the charts draw the past.
 */
import { MAX_ENGINE_CHECKPOINTS, type CheckpointThinning } from '../engine/engine-checkpoints';
import { formatSpan } from '../engine/extend';

const MB = 2 ** 20;

/** "Long run: seeks back start from 24 engine copies, about one every 7 h …". */
export function thinningWords(th: CheckpointThinning, start: number): string {
  const every = formatSpan(Math.max(1000, th.spacingMs));
  const budget =
    th.budgetBytes >= MB
      ? `${Math.round(th.budgetBytes / MB)} MB`
      : `${Math.max(1, Math.round(th.budgetBytes / 1024))} KB`;
  const from = th.from - start;
  const bounded = `Long run: to keep memory bounded (at most ${MAX_ENGINE_CHECKPOINTS} engine copies, ${budget})`;
  if (th.kept === 1)
    return `${bounded}, one copy a seek back starts from is kept, at ${formatSpan(from)} into the run; a seek back re-simulates from it, and from the start before it.`;
  return (
    `${bounded}, the copies a seek back starts from are ` +
    `thinned to ${th.kept}, about one every ${every} (${formatSpan(from)} to ${formatSpan(th.to - start)} ` +
    `into the run); a seek back re-simulates up to ${every} from the nearest one before it` +
    (from > 0 ? `, and from the start before ${formatSpan(from)}.` : '.')
  );
}

/** "Long run: the charts show one point every 12 min before 2 d 3 h into the run, …". */
export function chartWords(stride: number, sampleMs: number, fullFrom: number): string {
  return (
    `Long run: the charts show one point every ${formatSpan(stride * sampleMs)} before ` +
    `${formatSpan(fullFrom)} into the run and every sample (${formatSpan(sampleMs)}) after, ` +
    `to keep the page light; the figures beside them are exact.`
  );
}
