/**
 * A lane that refuses as a real client does (issue #25), run end to end: the same seeded
 * population against the lab's typed denial (lane A) and one real client's frame (lane B), both
 * connection-scoped, the user saying no. Every frame still conforms to the SDK's schema; the
 * guarantee a foreign style gives up is listed as waived, never silently dropped.
 */
import { describe, expect, it } from 'vitest';
import { defaultPolicy } from '../../machine/policy';
import type { ErrorFrame } from '../../machine/types';
import { DENIAL_STYLES, FOREIGN_REFUSALS, type DenialStyle } from '../../machine/refusal-styles';
import { sdkFrameProblem } from '../checks/conformance';
import type { FrameLine } from '../engine/engine';
import { guardedSimulation } from '../checks/guard';
import { parseScenario } from '../input/scenario';
import type { LaneId } from '../../machine/vocabulary';

/** The starter policy without volume controls: every refusal here is the user's. */
const policy = (() => {
  const p = defaultPolicy();
  p.defaults = { ...p.defaults, rateLimit: null, budget: null, perCallCap: null };
  p.servers = {};
  return p;
})();

function scenario(style: DenialStyle) {
  const r = parseScenario({
    version: 1,
    name: `styles-${style}`,
    title: 'Refusal styles',
    seed: 5,
    start: '2026-03-10T09:00:00Z',
    durationMs: 3_600_000,
    servers: [
      {
        name: 'notes',
        behaviour: 'well-behaved',
        count: 2,
        params: { backoffMs: 1000 },
        request: { prompt: 'Summarise the release notes for version {n}.', maxTokens: 300 },
        intervalMs: 600_000,
        timeoutMs: 30_000
      },
      {
        name: 'retrier',
        behaviour: 'naive-retrier',
        count: 1,
        params: { maxRetries: 3, jitter: 0 },
        request: { prompt: 'Classify ticket {n}.', maxTokens: 100 },
        intervalMs: 900_000,
        timeoutMs: 30_000
      }
    ],
    // A user who always says no, at once.
    user: { approveBase: 0, fatiguePerPrompt: 0, maxApprove: 0, responseMs: 500 },
    lanes: {
      A: { label: 'Lab', client: { store: 'connection' }, policy },
      B: { label: style, client: { store: 'connection', denialStyle: style }, policy }
    }
  });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.scenario;
}

function run(style: DenialStyle) {
  const frames: FrameLine[] = [];
  const { sim, guard } = guardedSimulation(
    scenario(style),
    { onFrame: (l) => frames.push(l) },
    { validate: sdkFrameProblem }
  );
  sim.runToEnd();
  const out = (lane: LaneId) =>
    frames.filter((l) => l.lane === lane && l.direction === 'out').map((l) => l.frame);
  return {
    A: sim.lanes.A.metrics.counters,
    B: sim.lanes.B.metrics.counters,
    outA: out('A'),
    outB: out('B'),
    guarantees: guard.results()
  };
}

const runs = new Map(DENIAL_STYLES.map((s) => [s, run(s)]));
const of = (s: DenialStyle) => runs.get(s)!;

describe('a lane refusing in each style, against the lab’s typed denial', () => {
  it.each(DENIAL_STYLES)('%s: every refusal lane B sends is that client’s frame', (style) => {
    const r = of(style);
    const refusals = r.outB.filter((f): f is ErrorFrame => 'error' in f);
    expect(refusals.length).toBeGreaterThan(0);
    for (const f of refusals) {
      if (style === 'lab') expect(f.error.code).toBe(-32003);
      else
        expect(f.error).toEqual({
          code: FOREIGN_REFUSALS[style].code,
          message: FOREIGN_REFUSALS[style].message
        });
    }
  });

  it.each(DENIAL_STYLES)(
    '%s: the guarantees hold; a foreign style is listed as waived, with its count',
    (style) => {
      const r = of(style);
      const broken = r.guarantees.filter((g) => g.status === 'broken');
      expect(broken).toEqual([]);
      expect(r.guarantees.find((g) => g.id === 'frames-conform')?.status).toBe('held');
      const typed = r.guarantees.find((g) => g.id === 'refusals-typed');
      if (style === 'lab') expect(typed).toBeUndefined();
      else {
        const refusals = r.outB.filter((f) => 'error' in f).length;
        expect(typed).toMatchObject({ status: 'waived', checked: refusals });
        expect(typed!.summary).toContain(`lane B refuses like ${FOREIGN_REFUSALS[style].client}`);
      }
    }
  );

  it('the lab lane’s numbers do not depend on lane B’s style', () => {
    for (const s of DENIAL_STYLES) expect(of(s).A).toEqual(of('lab').A);
  });

  it('lab: one prompt per task; only the naive retrier asks again, and is answered from the store', () => {
    const { A } = of('lab');
    expect(A.reconnects).toBe(0);
    expect(A.consentPrompts).toBe(A.tasks);
    expect(A.abandoned).toBe(A.tasks);
    // The naive retrier never reads `retryable`: its 3 retries a task are replays, not prompts.
    expect(A.retries).toBe(A.replays);
    expect(A.retries % 3).toBe(0);
  });

  it('vscode: every refusal reads as a dropped connection — servers reconnect, ask again, and a connection-scoped store asks the user again', () => {
    const { A, B } = of('vscode');
    expect(B.reconnects).toBeGreaterThan(0);
    expect(B.retries).toBeGreaterThan(A.retries);
    expect(B.consentPrompts).toBeGreaterThan(A.consentPrompts);
  });

  it('inspector (-32603): retried as a transient failure, on the same connection', () => {
    const { A, B } = of('inspector');
    expect(B.reconnects).toBe(0);
    expect(B.retries).toBeGreaterThan(A.retries);
  });
});
