/**
 * The parsers and frame checks load on first use (sim/input/parsers.ts: the playground's worker
 * starts without zod); a test drives the session directly, so they are loaded before any test.
 */
import { loadParsers } from './lib/sim/input/parsers';

await loadParsers();
