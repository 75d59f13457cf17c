/**
 * The seeds' guarantees as code: their catalogue and how results read (catalogue.ts), the
 * streaming checker (checker.ts) and its summaries (summaries.ts). Import from here.
 */
export {
  INVARIANTS,
  MAX_OFFENDERS,
  brokenLine,
  rowsBehind,
  type GuaranteeStatus,
  type InvariantId,
  type InvariantResult,
  type Offender
} from './catalogue';
export {
  InvariantChecker,
  storedDecisionProblem,
  type ChargeContext,
  type CheckerOptions,
  type FrameValidator,
  type RequestContext
} from './checker';
