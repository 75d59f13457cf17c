/**
 * The modules that validate with zod, as one chunk the playground's worker loads on first use
 * (parsers.ts says when). Nothing else imports this file. The run digest rides along: only the
 * self-test's `digest` command uses it, always after parsing its scenario here, and its streaming
 * SHA-256 (a whole run's frames and audit, too long to hash in one piece) would otherwise be in
 * the worker's first load.
 */
export { parseScenario } from './scenario';
export { parseTimeline } from '../timeline/actions';
export { parseFork } from '../engine/fork';
export { sdkFrameProblem } from '../checks/conformance';
export { digestRun } from '../report/report';
