/**
 * Play's speed setting (playground.svelte.ts): a logarithmic slider, and the steps the `+` and `-`
 * keys move along (playground-page.svelte.ts).
 */

/** Speeds on a logarithmic slider: 1× to 1000× simulated time. */
export const MIN_SPEED = 1;
export const MAX_SPEED = 1000;
export const DEFAULT_SPEED = 60;

/** The steps `+` and `-` move along. */
export const SPEED_STEPS = [1, 2, 5, 10, 20, 30, 60, 120, 250, 500, 1000];

/** The next step up or down from `speed` (from between two steps, the nearer one in that direction). */
export function nextSpeed(speed: number, dir: 1 | -1): number {
  if (dir > 0) return SPEED_STEPS.find((s) => s > speed) ?? MAX_SPEED;
  return [...SPEED_STEPS].reverse().find((s) => s < speed) ?? MIN_SPEED;
}

export function speedToSlider(speed: number): number {
  return Math.round((Math.log10(speed) / Math.log10(MAX_SPEED)) * 100);
}
export function sliderToSpeed(v: number): number {
  const s = Math.pow(10, (v / 100) * Math.log10(MAX_SPEED));
  return s < 10 ? Math.round(s * 10) / 10 : Math.round(s);
}
