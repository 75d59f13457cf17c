/**
 * What a finished (or paused) run reports: the per-lane summary the CLI prints and the
 * `metrics.json` it writes. Pure: the same simulation gives the same text.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { fromMicros } from '../../machine/money';
import type { AuditRecord } from '../../machine/types';
import { orderRecord } from '../../store/audit-format';
import { Simulation, type FrameLine, type SimulationOptions } from '../engine/engine';
import type { InvariantResult } from '../checks/invariants';
import type { LaneCounters } from '../engine/metrics';
import { LANE_IDS } from '../input/lanes';
import type { LaneId, Scenario } from '../input/scenario';

export interface LaneSummary {
  lane: LaneId;
  label: string;
  requests: number;
  frames: LaneCounters['frames'];
  silenced: number;
  consentPrompts: number;
  providerCalls: number;
  spend: string;
  replays: number;
  fresh: number;
  alerts: number;
  alertedIdentities: number;
  abandoned: number;
  completed: number;
  retries: number;
  hostRetries: number;
  denials: Record<string, number>;
}

function laneSummary(sim: Simulation, id: LaneId): LaneSummary {
  const lane = sim.lanes[id];
  const c = lane.metrics.counters;
  return {
    lane: id,
    label: lane.label,
    requests: c.requests,
    frames: { ...c.frames },
    silenced: c.silenced,
    consentPrompts: c.consentPrompts,
    providerCalls: c.providerCalls,
    spend: fromMicros(c.spendMicros),
    replays: c.replays,
    fresh: c.fresh,
    alerts: c.alerts,
    alertedIdentities: c.alertedIdentities,
    abandoned: c.abandoned,
    completed: c.completed,
    retries: c.retries,
    hostRetries: c.hostRetries,
    denials: { ...c.denials }
  };
}

/** The table `lab run` prints: one column per lane. */
export function summaryTable(sim: Simulation): string {
  const [a, b] = LANE_IDS.map((id) => laneSummary(sim, id)) as [LaneSummary, LaneSummary];
  const rows: [string, string, string][] = [
    ['', `A: ${a.label}`, `B: ${b.label}`],
    ['requests', String(a.requests), String(b.requests)]
  ];
  for (const o of Object.keys(a.frames) as (keyof LaneCounters['frames'])[]) {
    if (a.frames[o] || b.frames[o])
      rows.push([`  frames ${o}`, String(a.frames[o]), String(b.frames[o])]);
  }
  rows.push(
    ['  silenced (no frame)', String(a.silenced), String(b.silenced)],
    ['consent prompts', String(a.consentPrompts), String(b.consentPrompts)],
    ['provider calls', String(a.providerCalls), String(b.providerCalls)],
    ['spend (USD)', a.spend, b.spend],
    ['fresh evaluations', String(a.fresh), String(b.fresh)],
    ['replayed decisions', String(a.replays), String(b.replays)],
    [
      'retry-loop alerts',
      `${a.alerts} (${a.alertedIdentities} ids)`,
      `${b.alerts} (${b.alertedIdentities} ids)`
    ],
    ['abandoned requests', String(a.abandoned), String(b.abandoned)]
  );
  // Who retried, where a lane runs 2026-07-28 and its host called tools again.
  if (a.hostRetries || b.hostRetries)
    rows.push(
      ['retries by servers', String(a.retries), String(b.retries)],
      ['tool calls retried by the host', String(a.hostRetries), String(b.hostRetries)]
    );
  const w = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) =>
      r.map((cell, i) => (i === 0 ? cell.padEnd(w[0]!) : cell.padStart(w[i]!))).join('  ')
    )
    .join('\n');
}

const MARK = { held: '✓', broken: '✗', waived: '–' } as const;

/** The guarantees as the CLI prints them under the summary: one line each. */
export function guaranteesTable(results: readonly InvariantResult[]): string {
  const w = Math.max(...results.map((r) => r.id.length));
  return [
    'guarantees',
    ...results.map((r) => `  ${MARK[r.status]} ${r.id.padEnd(w)}  ${r.summary}`)
  ].join('\n');
}

/**
 * `metrics.json`: the summary, every counter, the time series and the statechart's edge counts,
 * and the run's guarantees when it was checked.
 */
export function metricsJson(sim: Simulation, guarantees?: readonly InvariantResult[]): string {
  const lanes = Object.fromEntries(
    LANE_IDS.map((id) => {
      const m = sim.lanes[id].metrics;
      return [
        id,
        {
          summary: laneSummary(sim, id),
          counters: m.counters,
          edges: m.edges,
          series: m.series,
          user: sim.lanes[id].userStats,
          provider: sim.lanes[id].providerStats
        }
      ];
    })
  );
  return (
    JSON.stringify(
      {
        scenario: sim.scenario.name,
        seed: sim.seed,
        start: new Date(sim.start).toISOString(),
        end: new Date(sim.clock.now()).toISOString(),
        marks: sim.marks,
        lanes,
        ...(guarantees
          ? {
              guarantees: guarantees.map((g) => ({
                id: g.id,
                status: g.status,
                summary: g.summary,
                checked: g.checked,
                violations: g.violations,
                offenders: g.offenders
              }))
            }
          : {})
      },
      null,
      2
    ) + '\n'
  );
}

/** One line of `frames.jsonl`, exactly as the CLI writes it and the golden tests hash it. */
export function frameLineJson(l: FrameLine): string {
  return JSON.stringify(l);
}

/** One line of `audit.jsonl`: fixed key order, so the file is byte-stable. */
export function auditLineJson(r: AuditRecord): string {
  return JSON.stringify(orderRecord(r));
}

export interface RunDigest {
  frames: string;
  audit: string;
  frameLines: number;
  auditLines: number;
}

/**
 * Run a scenario to its end and digest `frames.jsonl` and `audit.jsonl` (SHA-256 of the exact
 * bytes). The same scenario and seed give the same digests in Node and in a Web Worker.
 */
export function digestRun(
  scenario: Scenario,
  opts: Pick<SimulationOptions, 'seed' | 'trace' | 'restartAt'> = {}
): RunDigest {
  const frames = sha256.create();
  const audit = sha256.create();
  const enc = new TextEncoder();
  let frameLines = 0;
  let auditLines = 0;
  const sim = new Simulation(scenario, {
    ...opts,
    onFrame: (l) => {
      frames.update(enc.encode(frameLineJson(l) + '\n'));
      frameLines++;
    },
    onAudit: (r) => {
      audit.update(enc.encode(auditLineJson(r) + '\n'));
      auditLines++;
    }
  });
  sim.runToEnd();
  return {
    frames: bytesToHex(frames.digest()),
    audit: bytesToHex(audit.digest()),
    frameLines,
    auditLines
  };
}
