/**
 * The statechart's drawn size (its layout's viewBox), known to the playground without the
 * drawing's code: the place it holds until the statechart is mounted (when-seen.ts), so nothing
 * moves when it arrives. statechart-layout.spec.ts checks it against the layout.
 */
export const STATECHART_BOX = { width: 516, height: 343 } as const;
