import { error } from '@sveltejs/kit';
import { loadLessons } from '$lib/ui/lessons/catalog';
import { isStep, STEPS } from '$lib/ui/lessons/presenter';
import type { EntryGenerator, PageLoad } from './$types';

/** Every lesson's every step is a page of its own: deep links work on a static host. */
export const entries: EntryGenerator = () =>
  loadLessons().flatMap((l) => STEPS.map((step) => ({ name: l.name, step })));

export const load: PageLoad = ({ params }) => {
  const lesson = loadLessons().find((l) => l.name === params.name);
  if (!lesson || !isStep(params.step)) error(404, 'No such lesson or step');
  return { lesson, step: params.step };
};
