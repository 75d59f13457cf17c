/**
 * When a part of the page comes near the window (issue #24, first load): the playground mounts its
 * lower panels — the statechart, the time-travel panel, the audit log, the frame inspector — and
 * fetches their code only then, so the first load carries what the first screen shows.
 *
 * An attachment: `<div {@attach whenSeen(() => (seen = true))}>`. It calls back once, when the
 * element is within `margin` of the viewport, then stops watching; where IntersectionObserver is
 * missing it calls back at once (the part loads as if it were on screen).
 */
import type { Attachment } from 'svelte/attachments';

/**
 * How near the window a part must come to load: in it. A part just below the fold at a common
 * window size (the statechart at 1440×900) would otherwise load with the first screen; its place is
 * held meanwhile (its code is a few KB, fetched as it scrolls in), and the panels a run fills also
 * load once it starts (`whenIdle`).
 */
export const SEEN_MARGIN = '0px';

export function whenSeen(onSeen: () => void, margin = SEEN_MARGIN): Attachment<Element> {
  return (node) => {
    if (typeof IntersectionObserver === 'undefined') {
      onSeen();
      return;
    }
    const watch = new IntersectionObserver(
      (entries) => {
        if (!entries.some((e) => e.isIntersecting)) return;
        watch.disconnect();
        onSeen();
      },
      { rootMargin: margin }
    );
    watch.observe(node);
    return () => watch.disconnect();
  };
}

/**
 * Runs `task` when the main thread is idle (or after `timeout` ms at the latest): what a lazy part
 * does when it is wanted soon but not now, such as the panels a started run fills.
 */
export function whenIdle(task: () => void, timeout = 1000): () => void {
  if (typeof requestIdleCallback === 'function') {
    const id = requestIdleCallback(task, { timeout });
    return () => cancelIdleCallback(id);
  }
  const id = setTimeout(task, 1);
  return () => clearTimeout(id);
}
