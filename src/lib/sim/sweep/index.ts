/** Sweeps (SPEC §13): a grid of settings × seeds over one scenario, and its trade-off. */
export { parseSweep, SWEEP_LIMITS, type Sweep, type GridAxis, type Objective } from './file';
export { parseConstraint, parseMetric, LANE_METRICS, type Constraint } from './metrics';
export { parsePath, pathText, setPath } from './path';
export { gridPoints, planSweep, settingsText, type PlannedPoint, type SweepPlan } from './plan';
export { runOnce, type SeedRun } from './run';
export {
  brokenRuns,
  paretoFront,
  paretoJson,
  pointsCsv,
  pointsJson,
  requireGate,
  summarise,
  sweepResults,
  type MetricSummary,
  type PointResult,
  type SweepResults
} from './results';
export {
  fillSweepTemplate,
  parseLessonWithSweeps,
  parseSweepQuote,
  sweepTemplateErrors,
  type SweepQuote
} from './lesson';
