/**
 * "Same refusal, six codes" (issue #25): one seeded population run once per refusal style, the
 * chosen lane refusing as each real client does, so the styles can be read side by side as a
 * matrix — what the servers did (retries, reconnects, abandoned tasks) and what it cost (consent
 * prompts, spend). Deterministic: the same scenario and seed give the same matrix, in Node and in
 * the page.
 */
import { DENIAL_STYLES, FOREIGN_REFUSALS } from '../../machine/refusal-styles';
import { fromMicros } from '../../machine/money';
import { Simulation } from '../engine/engine';
import type { MatrixRow } from './refusal-matrix-text';
import { parseScenario, type LaneId, type ScenarioError } from '../input/scenario';

export type { MatrixRow };

export type MatrixResult = { ok: true; rows: MatrixRow[] } | { ok: false; errors: ScenarioError[] };

/**
 * Run `scenario` (its JSON) once per refusal style, lane `lane` set to that style (the other lane
 * as the file has it). A scenario the parser refuses is refused here with its errors. `onRow`
 * hears each row as it is done (the page's worker reports progress with it).
 */
export function refusalMatrix(
  scenario: unknown,
  lane: LaneId,
  onRow?: (row: MatrixRow, index: number) => void
): MatrixResult {
  const rows: MatrixRow[] = [];
  for (const style of DENIAL_STYLES) {
    const data = structuredClone(scenario) as { lanes?: Record<string, { client?: object }> };
    const l = data?.lanes?.[lane];
    if (l && typeof l === 'object') l.client = { ...l.client, denialStyle: style };
    const r = parseScenario(data);
    if (!r.ok) return r;
    const sim = new Simulation(r.scenario);
    sim.runToEnd();
    const c = sim.lanes[lane].metrics.counters;
    const row: MatrixRow = {
      style,
      code: style === 'lab' ? -32003 : FOREIGN_REFUSALS[style].code,
      client: style === 'lab' ? 'this lab' : FOREIGN_REFUSALS[style].client,
      requests: c.requests,
      refusals: c.frames.denied,
      retries: c.retries,
      reconnects: c.reconnects,
      consentPrompts: c.consentPrompts,
      abandoned: c.abandoned,
      completed: c.completed,
      spendMicros: c.spendMicros
    };
    rows.push(row);
    onRow?.(row, rows.length - 1);
  }
  return { ok: true, rows };
}

/** The matrix as `lab styles` prints it: one row per style, one column per measure. */
export function matrixText(rows: readonly MatrixRow[]): string {
  const head = [
    'style',
    'code',
    'requests',
    'refusals',
    'retries',
    'reconnects',
    'prompts',
    'abandoned',
    'completed',
    'spend (USD)'
  ];
  const table = [
    head,
    ...rows.map((r) => [
      r.style,
      String(r.code),
      String(r.requests),
      String(r.refusals),
      String(r.retries),
      String(r.reconnects),
      String(r.consentPrompts),
      String(r.abandoned),
      String(r.completed),
      fromMicros(r.spendMicros)
    ])
  ];
  const w = head.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  return table
    .map((row) =>
      row.map((cell, i) => (i === 0 ? cell.padEnd(w[i]!) : cell.padStart(w[i]!))).join('  ')
    )
    .join('\n');
}
