/**
 * The shipped handler (issue #20): `createSamplingPolicy` for a real MCP client's
 * `sampling/createMessage` handler, and the stores it can use. See the README's
 * "Use it in your MCP client".
 */
export {
  createSamplingPolicy,
  SamplingError,
  type Connection,
  type HandlerStats,
  type RequestExtra,
  type SamplingPolicy,
  type SamplingPolicyOptions,
  type SamplingRequestMessage
} from './handler';
export { HandlerConfigError } from './options';
export {
  DEFAULT_LIMITS,
  type HandlerErrorContext,
  type HandlerLimits,
  type OnError
} from './guard';
export { memoryStore, type MemoryStoreOptions } from './stores';
export { fileStore, FileDecisionStore, FileStoreError, type FileStoreOptions } from './file-store';
export type { DecisionStore } from '../store/decision-store';
export type { AuditTarget, HandlerAuditRecord } from './audit';
export type {
  ConsentAnswer,
  ConsentFn,
  ConsentRequest,
  SampleFn,
  SampleOptions,
  SampleResult
} from './sources';
