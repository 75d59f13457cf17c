/**
 * The windowing arithmetic of a virtualised list with a fixed row height: which rows to put in the
 * DOM for a scroll offset, where to place them, and where to scroll to bring a row into view. Pure
 * numbers, no DOM, so it is tested in Node.
 *
 * Browsers cap an element's height (Chromium near 2^25 px, Firefox lower), so past
 * `maxHeight` the spacer stops growing and the scroll offset is mapped proportionally onto the
 * rows: the scrollbar then moves more than one row per row-height of travel, but every row stays
 * reachable and the rows on screen are still laid out at their natural height.
 */

/** Chromium clamps heights around 33.5M px and Firefox around 17.9M px; stay well under both. */
export const DEFAULT_MAX_HEIGHT = 15_000_000;

export interface WindowInput {
  /** The scroll container's `scrollTop`, measured from the top of the rows. */
  scrollTop: number;
  /** The height in px of the area the rows are visible in. */
  viewportHeight: number;
  /** Every row's height in px (fixed). */
  rowHeight: number;
  /** How many rows the list has. */
  count: number;
  /** Extra rows rendered above and below the visible ones, so a fast scroll shows no gap. */
  overscan: number;
  /** The tallest spacer to create; defaults to {@link DEFAULT_MAX_HEIGHT}. */
  maxHeight?: number;
}

export interface VirtualWindow {
  /** First row to render (inclusive). */
  start: number;
  /** Last row to render (exclusive); `end - start` rows are in the DOM. */
  end: number;
  /** Where the first rendered row's top goes, in px from the top of the spacer. */
  offsetY: number;
  /** The spacer's height in px: what the scrollbar measures. */
  totalHeight: number;
}

interface Geometry {
  /** The rows' natural height: `count * rowHeight`. */
  natural: number;
  /** The spacer's height: `natural`, capped. */
  total: number;
  /** How far the rows themselves can scroll (natural px). */
  rowRange: number;
  /** How far the spacer can scroll (spacer px). */
  scrollRange: number;
}

function geometry(i: Omit<WindowInput, 'scrollTop' | 'overscan'>): Geometry {
  const rowHeight = Math.max(1, i.rowHeight);
  const natural = Math.max(0, i.count) * rowHeight;
  const total = Math.min(natural, Math.max(1, i.maxHeight ?? DEFAULT_MAX_HEIGHT));
  const viewport = Math.max(0, i.viewportHeight);
  return {
    natural,
    total,
    rowRange: Math.max(0, natural - viewport),
    scrollRange: Math.max(0, total - viewport)
  };
}

/** The scroll offset in natural (unscaled) row pixels for a spacer scroll offset. */
function naturalTop(scrollTop: number, g: Geometry): number {
  const s = Math.min(Math.max(0, scrollTop), g.scrollRange);
  if (g.total === g.natural || g.scrollRange === 0) return s;
  return (s / g.scrollRange) * g.rowRange;
}

/** The rows to render for a scroll offset, and where the first of them goes. */
export function virtualWindow(i: WindowInput): VirtualWindow {
  const rowHeight = Math.max(1, i.rowHeight);
  const count = Math.max(0, Math.floor(i.count));
  const overscan = Math.max(0, Math.floor(i.overscan));
  const g = geometry(i);
  if (count === 0) return { start: 0, end: 0, offsetY: 0, totalHeight: 0 };
  const top = naturalTop(i.scrollTop, g);
  const first = Math.min(count - 1, Math.floor(top / rowHeight));
  // +1: a viewport that starts mid-row shows a sliver of one more row at the bottom.
  const visible = Math.ceil(Math.max(0, i.viewportHeight) / rowHeight) + 1;
  const start = Math.max(0, first - overscan);
  const end = Math.min(count, first + visible + overscan);
  // The scroll offset in spacer px, minus how far into the rows it reaches, plus the first
  // rendered row's natural position: equal to start * rowHeight when nothing is scaled.
  const clamped = Math.min(Math.max(0, i.scrollTop), g.scrollRange);
  const offsetY = clamped - top + start * rowHeight;
  return { start, end, offsetY, totalHeight: g.total };
}

/**
 * The `scrollTop` that brings row `index` fully into view with the least movement (unchanged when
 * it already is): what a keyboard move to a row needs.
 */
export function scrollToReveal(index: number, i: Omit<WindowInput, 'overscan'>): number {
  const rowHeight = Math.max(1, i.rowHeight);
  const g = geometry(i);
  const count = Math.max(0, Math.floor(i.count));
  if (count === 0) return 0;
  const row = Math.min(Math.max(0, Math.floor(index)), count - 1);
  const top = naturalTop(i.scrollTop, g);
  const viewport = Math.max(0, i.viewportHeight);
  const rowTop = row * rowHeight;
  let wanted = top;
  if (rowTop < top) wanted = rowTop;
  else if (rowTop + rowHeight > top + viewport) wanted = rowTop + rowHeight - viewport;
  if (wanted === top) return Math.min(Math.max(0, i.scrollTop), g.scrollRange);
  wanted = Math.min(Math.max(0, wanted), g.rowRange);
  if (g.total === g.natural || g.rowRange === 0) return wanted;
  return (wanted / g.rowRange) * g.scrollRange;
}

/** Whether a scroll offset is at (or within `slack` px of) the end: a log view then follows new rows. */
export function isAtEnd(
  scrollTop: number,
  viewportHeight: number,
  totalHeight: number,
  slack = 2
): boolean {
  return scrollTop + viewportHeight >= totalHeight - slack;
}
