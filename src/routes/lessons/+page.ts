import { loadLessons } from '$lib/ui/lessons/catalog';

export function load() {
  return { lessons: loadLessons() };
}
