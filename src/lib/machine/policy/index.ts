/**
 * The policy: its zod schema (schema.ts), the parser that reports every error with its place
 * (parse.ts, over errors.ts and json-text.ts), and the effective block and hash per server
 * (effective.ts). Import from here.
 */
export {
  DEFAULT_POLICY,
  POLICY_LIMITS,
  PolicyBlockSchema,
  PolicySchema,
  ServerBlockSchema,
  defaultPolicy,
  policyJsonSchema,
  type Policy,
  type PolicyBlock,
  type ServerBlock
} from './schema';
export { formatPath, type PathSegment } from './path';
export { describeIssues, policyKeysAt } from './errors';
export { parsePolicy, type PolicyError, type PolicyParse } from './parse';
export { changedServers, effectiveBlock, policyHash } from './effective';
export {
  duplicateMessage,
  findDuplicateMember,
  jsonSyntaxProblem,
  parseJsonText,
  type JsonTextParse,
  type JsonTextProblem
} from './json-strict';
