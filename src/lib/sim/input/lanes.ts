/**
 * The two lanes, as plain data: the engine and the playground's worker iterate them, and load no
 * zod for it (issue #24). The scenario's schema takes the same ids (lanes.spec.ts).
 */
import type { LaneId } from '../../machine/vocabulary';

export const LANE_IDS: readonly LaneId[] = ['A', 'B'];
