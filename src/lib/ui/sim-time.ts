/** Virtual time since the scenario's start as h:mm:ss ("–:––:––" for a time that is not one). */
export function formatSimTime(ms: number): string {
  if (!Number.isFinite(ms)) return '–:––:––';
  const s = Math.floor(Math.max(0, ms) / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  return `${h}:${String(m).padStart(2, '0')}:${String(sec).padStart(2, '0')}`;
}
