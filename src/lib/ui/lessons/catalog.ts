/**
 * The lesson files (static/lessons/*.json), bundled at build time and validated there: a lesson
 * with an error fails the build with its file and JSON path, so a presenter never meets a broken
 * lesson in front of a room.
 */
import type { LessonData } from '$lib/sim/input/lessons';
import { parseLessonWithSweeps, parseSweep, type Sweep } from '$lib/sim/sweep';
import { READY_SWEEPS } from '../sweep/catalog';

// As text, not as Vite's parsed JSON: `JSON.parse` would silently keep the last of a member name
// given twice, and the lesson parser refuses that with its path (as in every input).
const FILES = import.meta.glob<string>('/static/lessons/*.json', {
  eager: true,
  query: '?raw',
  import: 'default'
});

/** The ready-made sweeps a lesson may name, parsed (static-sweeps.spec.ts keeps them valid). */
function readySweeps(): Record<string, Sweep> {
  const out: Record<string, Sweep> = {};
  for (const s of READY_SWEEPS) {
    const r = parseSweep(s.text);
    if (r.ok) out[s.name] = r.sweep;
  }
  return out;
}

/** Every lesson, in teaching order. Throws (naming file and path) if one is invalid. */
export function loadLessons(files: Record<string, unknown> = FILES): LessonData[] {
  const out: LessonData[] = [];
  const sweeps = readySweeps();
  for (const [file, data] of Object.entries(files)) {
    const r = parseLessonWithSweeps(data, sweeps);
    if (!r.ok) {
      const e = r.errors[0]!;
      throw new Error(`${file}: ${e.path}: ${e.message}`);
    }
    out.push(r.lesson);
  }
  return out.sort((a, b) => a.order - b.order);
}
