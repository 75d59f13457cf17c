/** Virtual time since the scenario's start as h:mm:ss ("–:––:––" for a time that is not one). */
export function formatSimTime(ms: number): string {
  if (!Number.isFinite(ms)) return '–:––:––';
  const s = Math.floor(Math.max(0, ms) / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  return `${h}:${String(m).padStart(2, '0')}:${String(sec).padStart(2, '0')}`;
}

/** A span of virtual time in words, rounded to the minute past one: "45 s", "57 min", "1 h 3 min". */
export function formatSpan(ms: number): string {
  if (!Number.isFinite(ms) || ms <= 0) return '0 s';
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
  const min = Math.round(ms / 60_000);
  const h = Math.floor(min / 60);
  const m = min % 60;
  if (h === 0) return `${m} min`;
  return m === 0 ? `${h} h` : `${h} h ${m} min`;
}

/**
 * A fast-forward's progress in words: "37% · about 14 s left" — the time left estimated from the
 * pace so far (wall ms since it started, at its last report); no estimate before there is a pace.
 */
export function ffProgressWords(ff: {
  done: number;
  total: number;
  started: number;
  at: number;
}): string {
  const frac = ff.total > 0 ? Math.min(1, ff.done / ff.total) : 0;
  const pct = `${Math.floor(frac * 100)}%`;
  const spent = ff.at - ff.started;
  if (frac <= 0 || spent < 250) return pct;
  const left = (spent * (1 - frac)) / frac;
  const s = Math.max(1, Math.round(left / 1000));
  const words = s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${pct} · about ${words} left`;
}
