/**
 * The lesson files (static/lessons/*.json), bundled at build time and validated there: a lesson
 * with an error fails the build with its file and JSON path, so a presenter never meets a broken
 * lesson in front of a room.
 */
import { parseLesson, type LessonData } from '$lib/sim/lessons';

// As text, not as Vite's parsed JSON: `JSON.parse` would silently keep the last of a member name
// given twice, and the lesson parser refuses that with its path (as in every input).
const FILES = import.meta.glob<string>('/static/lessons/*.json', {
  eager: true,
  query: '?raw',
  import: 'default'
});

/** Every lesson, in teaching order. Throws (naming file and path) if one is invalid. */
export function loadLessons(files: Record<string, unknown> = FILES): LessonData[] {
  const out: LessonData[] = [];
  for (const [file, data] of Object.entries(files)) {
    const r = parseLesson(data);
    if (!r.ok) {
      const e = r.errors[0]!;
      throw new Error(`${file}: ${e.path}: ${e.message}`);
    }
    out.push(r.lesson);
  }
  return out.sort((a, b) => a.order - b.order);
}
