/**
 * The modules that validate with zod, as one chunk the playground's worker loads on first use
 * (parsers.ts says when). Nothing else imports this file.
 */
export { parseScenario } from './scenario';
export { parseTimeline } from '../timeline/actions';
export { parseFork } from '../engine/fork';
export { sdkFrameProblem } from '../checks/conformance';
