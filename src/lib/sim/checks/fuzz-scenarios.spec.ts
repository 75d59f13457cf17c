/**
 * Random valid scenarios, every guarantee asserted on each. fast-check draws populations of
 * behaviours, policies with tiny budgets and rate limits, client configurations (silence,
 * retryable flips, short TTLs, store scopes, RFC switches), provider faults and users, all short
 * enough that a run stays small — and up to three edits a learner makes mid-run (a lane's whole
 * client configuration, or its policy). Each run is checked by the same invariants as the CLI;
 * every third is run twice to compare its bytes — the second time on the actor executor, so the
 * same comparison proves the simulation's table executor writes the actor path's bytes.
 *
 * On a failure the message carries the broken guarantee and the scenario JSON, and fast-check
 * prints its seed and path: `FUZZ_SEED=<seed> FUZZ_PATH=<path> npx vitest run <this file>` replays
 * it. `FUZZ_RUNS` sets the number of scenarios (default 60); `FUZZ_SURVEY=1` runs them all and
 * prints a tally of broken guarantees instead of stopping at the first.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sdkFrameProblem } from './conformance';
import { guardedSimulation } from './guard';
import { brokenLine, type InvariantResult } from './invariants';
import { auditLineJson, frameLineJson } from '../report/report';
import type { Executor } from '../../client/host';
// The second run of a case is on actors.
import '../../client/actor-executor';
import { applyEdits, caseArb, edgeCaseArb, type Edit } from '../input/fuzz-cases';
import { parseScenario } from '../input/scenario';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 60);
const SURVEY = process.env.FUZZ_SURVEY === '1';
const EDGE_RUNS = Number(process.env.FUZZ_RUNS ?? 40);

// ───────────────────────────── one run, checked ─────────────────────────────

function digester() {
  const h = sha256.create();
  const enc = new TextEncoder();
  return { line: (s: string) => h.update(enc.encode(s + '\n')), hex: () => bytesToHex(h.digest()) };
}

/** Run `data` to its end under its invariants, applying `edits` on the way. */
function runOnce(data: unknown, edits: readonly Edit[], executor: Executor = 'table') {
  const parsed = parseScenario(data);
  if (!parsed.ok)
    throw new Error(`the generator made an invalid scenario: ${JSON.stringify(parsed.errors)}`);
  const frames = digester();
  const audit = digester();
  const { sim, guard } = guardedSimulation(
    parsed.scenario,
    {
      executor,
      onFrame: (l) => frames.line(frameLineJson(l)),
      onAudit: (r) => audit.line(auditLineJson(r))
    },
    { validate: sdkFrameProblem }
  );
  applyEdits(sim, parsed.scenario.durationMs, edits);
  sim.runToEnd();
  return { guard, digest: { frames: frames.hex(), audit: audit.hex() } };
}

/** Run under the invariants; with `twice`, run again and compare the two runs' bytes. */
function check(data: unknown, twice: boolean, edits: readonly Edit[] = []): InvariantResult[] {
  const first = runOnce(data, edits);
  if (twice) first.guard.checker.sameBytes(first.digest, runOnce(data, edits, 'actor').digest);
  return first.guard.results();
}

// ───────────────────────────── the cases issue 7 measured ─────────────────────────────

const POLICY = (over: Record<string, unknown> = {}) => ({
  version: 1,
  defaults: {
    sampling: true,
    allowedModels: ['example-model-v2'],
    defaultModel: 'example-model-v2',
    maxInputTokens: 32_000,
    maxContext: 'thisServer',
    rateLimit: null,
    budget: null,
    perCallCap: null,
    consent: 'ask',
    ...over
  },
  servers: {}
});

const CASE = (over: Record<string, unknown>) => ({
  version: 1,
  name: 'case',
  title: 'A measured case',
  seed: 3,
  start: '2026-03-10T09:00:00Z',
  durationMs: 600_000,
  ...over
});

describe('the cases issue 7 measured keep every guarantee', () => {
  it('a retry that arrives before the first answer joins it: one consent dialog', () => {
    const lanes = (store: string) => ({
      label: store,
      client: { store, consentTimeoutMs: 300_000 },
      policy: POLICY()
    });
    const results = check(
      CASE({
        servers: [
          {
            name: 'impatient',
            behaviour: 'timeout-sensitive',
            request: { prompt: 'Summarise {n}.', maxTokens: 200 },
            intervalMs: 600_000,
            tasks: 1,
            timeoutMs: 5_000
          }
        ],
        user: { approveBase: 1, maxApprove: 1, responseMs: 200_000 },
        lanes: { A: lanes('connection'), B: lanes('durable') }
      }),
      false
    );
    expect(brokenLine(results)).toBeNull();
    expect(results.find((r) => r.id === 'one-consent')!.checked).toBeGreaterThan(0);
  });

  it('tokens streamed before a deadline are paid for', () => {
    const lane = {
      label: 'deadline',
      client: { deadlineMs: 15_000 },
      policy: POLICY({ consent: 'allow' })
    };
    const results = check(
      CASE({
        servers: [
          {
            name: 'slow',
            behaviour: 'well-behaved',
            request: { prompt: 'Write {n}.', maxTokens: 2_000 },
            intervalMs: 60_000,
            tasks: 1,
            timeoutMs: 120_000
          }
        ],
        provider: { latencyMs: 100, chunkTokens: 50, chunkIntervalMs: 1_000, outputFraction: 1 },
        lanes: { A: lane, B: lane }
      }),
      false
    );
    expect(brokenLine(results)).toBeNull();
    expect(results.find((r) => r.id === 'tokens-paid')!.checked).toBeGreaterThan(0);
  });
});

describe('random valid scenarios keep every guarantee', () => {
  it(
    `${RUNS} scenarios`,
    () => {
      const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
      const path = process.env.FUZZ_PATH;
      if (SURVEY) {
        const tally: Record<string, number> = {};
        const examples: Record<string, string> = {};
        for (const { scenario: s, edits } of fc.sample(caseArb, {
          numRuns: RUNS,
          ...(seed !== undefined ? { seed } : {})
        })) {
          for (const r of check(s, true, edits).filter((x) => x.status === 'broken')) {
            tally[r.id] = (tally[r.id] ?? 0) + 1;
            examples[r.id] ??= `${brokenLine([r])}\n${JSON.stringify({ scenario: s, edits })}`;
          }
        }
        console.log(`${RUNS} scenarios; broken guarantees:`, tally);
        for (const e of Object.values(examples)) console.log(e);
        return;
      }
      let n = 0;
      fc.assert(
        fc.property(caseArb, ({ scenario: s, edits }) => {
          // Every third scenario also runs twice: the bytes must not differ.
          const twice = n++ % 3 === 0;
          const results = check(s, twice, edits);
          const broken = brokenLine(results);
          if (broken)
            throw new Error(
              `${broken}\nscenario: ${JSON.stringify(s)}\nedits: ${JSON.stringify(edits)}`
            );
          // `refusals-typed` is listed (waived) only when a lane refused in a real client's style.
          const foreign = results.some((r) => r.id === 'refusals-typed') ? 1 : 0;
          expect(results.length).toBe((twice ? 12 : 11) + foreign);
        }),
        {
          numRuns: RUNS,
          ...(seed !== undefined ? { seed } : {}),
          ...(path ? { path } : {}),
          endOnFailure: true
        }
      );
      expect(n).toBeGreaterThanOrEqual(RUNS);
    },
    SURVEY ? 3_600_000 : 120_000
  );
});

describe('the edges issue 18 found keep every guarantee', () => {
  it(`${EDGE_RUNS} scenarios: tiny windows, held money, approvals then volume denials, foreign currencies`, () => {
    let n = 0;
    fc.assert(
      fc.property(edgeCaseArb, ({ scenario: s, edits }) => {
        const results = check(s, n++ % 5 === 0, edits);
        const broken = brokenLine(results);
        if (broken) throw new Error(`${broken}\nscenario: ${JSON.stringify(s)}`);
        expect(results.find((r) => r.id === 'denials-true')?.status).toBe('held');
      }),
      { numRuns: EDGE_RUNS, endOnFailure: true }
    );
  }, 120_000);
});
