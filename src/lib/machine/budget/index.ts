/** Budget caps (SPEC §6, the RFC), by concern: prices, the pre-flight, the meter, the shrink. */
export {
  DEFAULT_RATE_CARDS,
  TOKEN_UNIT,
  estimateCostMicros,
  estimateTokens,
  inputTokensOf,
  meterBasis,
  parseMeterBasis,
  tokenMeterBasis,
  type ParsedMeterBasis,
  type RateCard
} from './pricing';
export {
  intentHonored,
  preflight,
  preflightTokens,
  type PreflightInput,
  type PreflightResult,
  type PreflightTokensInput,
  type PreflightTokensResult
} from './preflight';
export { chunkCrosses, meteredCost, type MeterLimits, type MeterReading } from './meter';
export {
  exactShrink,
  exactShrinkInputTokens,
  naiveShrinkInputTokens,
  naiveShrinkRatio,
  type ExactShrink
} from './shrink';
