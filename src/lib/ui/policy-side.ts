/**
 * Where an open policy editor sits (issue #24): on a wide window, in the side panel beside the
 * lanes (PlaygroundView's `#policy-side`), as wide as the designer last made it; on a narrow one,
 * where it was opened, under its lane. The width is remembered in localStorage.
 */
export const SIDE_ID = 'policy-side';
export const WIDTH_KEY = 'sampling-policy-lab:policy-editor-width';
/** The side panel's width (px) when nothing is remembered, and its bounds. */
export const DEFAULT_WIDTH = 640;
export const MIN_WIDTH = 360;
/** The lanes keep at least this much of the window. */
export const MIN_REST = 420;
/** From this window width up the editor opens beside the lanes. */
export const SIDE_FROM = 900;

/** `w` within the bounds a window `windowWidth` wide allows. */
export function clampWidth(w: number, windowWidth: number): number {
  const max = Math.max(MIN_WIDTH, windowWidth - MIN_REST);
  return Math.round(Math.min(max, Math.max(MIN_WIDTH, w)));
}

/** The width before the designer chose one: 640 px, or 42% of a wider window. */
export function defaultWidth(windowWidth: number): number {
  return Math.max(DEFAULT_WIDTH, Math.round(windowWidth * 0.42));
}

/** The remembered width, or `fallback`; a stored value that is not a number is ignored. */
export function storedWidth(
  storage: Pick<Storage, 'getItem'> | null,
  fallback = DEFAULT_WIDTH
): number {
  const v = Number(storage?.getItem(WIDTH_KEY));
  return Number.isFinite(v) && v > 0 ? v : fallback;
}

/** Move an open editor's panel into the side panel when there is one and the window is wide. */
export function toSide(node: HTMLElement): () => void {
  const side = document.getElementById(SIDE_ID);
  if (side && window.innerWidth >= SIDE_FROM) side.append(node);
  return () => node.remove();
}
