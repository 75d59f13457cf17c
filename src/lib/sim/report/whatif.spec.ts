/**
 * The what-if report against numbers computed by hand on a small imported trace (the comments
 * give the reasoning), through `lab replay`'s own code path, and its CSV and text.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runAndWrite } from '../../../cli/run';
import { parseAuditJsonl } from '../../store/audit-export';
import { parseScenario } from '../input/scenario';
import { parseTrace } from '../input/trace';
import type { AuditRecord } from '../../machine/types';
import { Simulation } from '../engine/engine';
import { thenOf, WhatIfCollector, whatIfAuditRows, type WhatIfReport } from './whatif';
import { WHATIF_CSV_COLUMNS } from './whatif-text';

const policy = (defaults: object, servers: object = {}) => ({
  version: 1,
  defaults: {
    sampling: true,
    allowedModels: ['example-model-v2'],
    defaultModel: 'example-model-v2',
    maxInputTokens: 32000,
    maxContext: 'thisServer',
    rateLimit: null,
    budget: null,
    perCallCap: null,
    consent: 'allow',
    ...defaults
  },
  servers
});

/**
 * Lane A allows everything, two requests a minute per server; lane B asks a person who always
 * approves (after a second), and turns sampling off for `research`.
 */
const scenario = parseScenario(
  JSON.stringify({
    version: 1,
    name: 'whatif-hand',
    title: 'What-if by hand',
    summary: 'Two policies against six logged requests.',
    seed: 1,
    start: '2026-03-10T09:00:00Z',
    durationMs: 600_000,
    servers: [
      {
        name: 'unused',
        behaviour: 'well-behaved',
        request: { prompt: 'x', maxTokens: 10 },
        intervalMs: 60_000
      }
    ],
    user: { approveBase: 1, maxApprove: 1, fatiguePerPrompt: 0, responseMs: 1000 },
    lanes: {
      A: {
        label: 'Allow, 2 a minute',
        policy: policy({ rateLimit: { requests: 2, windowMs: 60_000 } })
      },
      B: {
        label: 'Ask; research off',
        policy: policy({ consent: 'ask' }, { research: { sampling: false } })
      }
    }
  })
);

const ask = (text: string) => ({
  messages: [{ role: 'user', content: { type: 'text', text } }],
  maxTokens: 50
});
const RESULT = { response: 'result', afterMs: 900, result: { model: 'claude-sonnet-4' } };
const DENIED = {
  response: 'error',
  afterMs: 400,
  error: { code: -32000, message: 'User rejected' }
};

/** What the log shows: mail served m1, m2, refused m3, never answered m4; research served r1, refused r2. */
const TRACE = [
  { t: 0, server: 'mail', type: 'connect' },
  { t: 1000, server: 'mail', type: 'request', params: ask('m1'), logged: RESULT },
  { t: 1500, server: 'research', type: 'request', params: ask('r1'), logged: RESULT },
  { t: 2000, server: 'mail', type: 'request', params: ask('m2'), logged: RESULT },
  { t: 2500, server: 'research', type: 'request', params: ask('r2'), logged: DENIED },
  { t: 3000, server: 'mail', type: 'request', params: ask('m3'), logged: DENIED },
  { t: 4000, server: 'mail', type: 'request', params: ask('m4'), logged: { response: 'none' } }
]
  .map((e) => JSON.stringify(e))
  .join('\n');

function replay(): { report: WhatIfReport; out: string; text: string } {
  if (!scenario.ok) throw new Error(JSON.stringify(scenario.errors));
  const trace = parseTrace(TRACE);
  if (!trace.ok) throw new Error(trace.error);
  const out = mkdtempSync(join(tmpdir(), 'whatif-'));
  const r = runAndWrite({ scenario: scenario.scenario, trace: trace.events, out });
  expect(r.broken).toBeNull();
  return { report: r.whatIf!, out, text: r.text };
}

describe('the what-if report, by hand', () => {
  const { report, out, text } = replay();
  const mail = report.servers.find((s) => s.server === 'mail')!;
  const research = report.servers.find((s) => s.server === 'research')!;

  it('the log: mail 2 served, 1 refused, 1 unanswered; research 1 and 1', () => {
    expect([mail.requests, mail.then]).toEqual([4, { served: 2, refused: 1, none: 1 }]);
    expect([research.requests, research.then]).toEqual([2, { served: 1, refused: 1, none: 0 }]);
    expect(report.total.then).toEqual({ served: 3, refused: 2, none: 1 });
  });

  it('lane A: mail’s third and fourth requests in the minute are rate-limited; research is served', () => {
    const a = mail.lanes.A;
    expect([a.served, a.refused, a.undecided]).toEqual([2, 2, 0]);
    // m3 was refused then and now; m4 had no answer and is refused now.
    expect([a.servedThenRefusedNow, a.refusedThenServedNow]).toEqual([0, 0]);
    expect(a.noneThen).toEqual({ served: 0, refused: 1 });
    const r = research.lanes.A;
    expect([r.served, r.refused, r.refusedThenServedNow]).toEqual([2, 0, 1]);
    expect(r.servedNowAfter).toEqual({ 'error -32000': 1 });
    expect([a.consentNow, r.consentNow, a.alertsNow]).toEqual([0, 0, 0]);
  });

  it('lane B: mail is asked four times and served; research is refused by policy', () => {
    const b = mail.lanes.B;
    expect([b.served, b.refused, b.consentNow]).toEqual([4, 0, 4]);
    expect([b.servedThenRefusedNow, b.refusedThenServedNow]).toEqual([0, 1]);
    expect(b.noneThen).toEqual({ served: 1, refused: 0 });
    const r = research.lanes.B;
    expect([r.served, r.refused, r.consentNow]).toEqual([0, 2, 0]);
    expect(r.servedThenRefusedNow).toBe(1);
    expect(r.refusedNowBy).toEqual({ 'policy.sampling_disabled': 1 });
  });

  it('totals, the changed requests, and what the log cannot say', () => {
    expect(report.total.lanes.A).toMatchObject({ served: 4, refused: 2, refusedThenServedNow: 1 });
    expect(report.total.lanes.B).toMatchObject({ served: 4, refused: 2, consentNow: 4 });
    // r1 (B refuses), r2 (A serves), m3 (B serves), m4 (both answer, the log shows none).
    expect(report.changed).toBe(4);
    expect(report.changes.map((c) => [c.t, c.server, c.then, c.lanes.A, c.lanes.B])).toEqual([
      [1500, 'research', 'result', 'allowed', 'policy.sampling_disabled'],
      [2500, 'research', 'error -32000', 'allowed', 'policy.sampling_disabled'],
      [3000, 'mail', 'error -32000', 'policy.rate_limit', 'allowed'],
      [4000, 'mail', 'no answer', 'policy.rate_limit', 'allowed']
    ]);
    // A client log says nothing of consent, spend or alerts.
    expect([report.total.consentThen, report.total.spendThen, report.total.alertsThen]).toEqual([
      null,
      null,
      null
    ]);
  });

  it('spend now is what each lane’s audit log charged', () => {
    const audit = parseAuditJsonl(readFileSync(join(out, 'audit.jsonl'), 'utf8'));
    if (!audit.ok) throw new Error(audit.error);
    for (const lane of ['A', 'B'] as const) {
      const micros = audit.records
        .filter((r) => r.lane === lane)
        .reduce((sum, r) => sum + Math.round(Number(r.cost) * 1e6), 0);
      expect(micros).toBeGreaterThan(0);
      expect(Math.round(Number(report.total.lanes[lane].spendNow) * 1e6)).toBe(micros);
    }
  });

  it('whatif.json and whatif.csv are written beside the run’s files', () => {
    expect(JSON.parse(readFileSync(join(out, 'whatif.json'), 'utf8'))).toEqual(report);
    const csv = readFileSync(join(out, 'whatif.csv'), 'utf8').split('\r\n');
    expect(csv[0]).toBe(WHATIF_CSV_COLUMNS.join(','));
    // A lane × (mail, research, total), then B × the same, and the final CRLF.
    expect(csv).toHaveLength(1 + 6 + 1);
    const row = (lane: string, server: string) =>
      Object.fromEntries(
        csv
          .find((l) => l.startsWith(`${lane},${server},`))!
          .split(',')
          .map((v, i) => [WHATIF_CSV_COLUMNS[i], v])
      );
    expect(row('B', 'research')).toMatchObject({
      requests: '2',
      then_served: '1',
      now_refused: '2',
      served_then_refused_now: '1',
      refused_now_by: 'policy.sampling_disabled=1',
      consent_then: ''
    });
    expect(row('A', '(total)')).toMatchObject({
      now_served: '4',
      served_now_after: 'error -32000=1'
    });
  });

  it('the text shows the log’s column beside the lanes’', () => {
    expect(text).toContain('what the policy would have done');
    expect(text).toMatch(/ {2}served then, refused now +0 +1\n/);
    expect(text).toMatch(/ {4}by policy\.sampling_disabled +0 +1\n/);
    expect(text).toMatch(/ {2}consent dialogs +\? +0 +4\n/);
    expect(text).toContain('4 requests changed outcome in a lane');
  });
});

describe('what a logged answer counts as', () => {
  it.each([
    [{ response: 'result', result: {} }, 'served', 'result'],
    [
      { response: 'result', result: { stopReason: 'budget_exceeded' } },
      'refused',
      'budget_exceeded'
    ],
    [{ response: 'error', error: { code: -32000 } }, 'refused', 'error -32000'],
    [{ response: 'none' }, 'none', 'no answer']
  ] as const)('%j → %s (%s)', (logged, then, label) => {
    expect(thenOf(logged)).toEqual({ then, label });
  });

  it('an audit record by its outcome; a shadow-mode one as served', () => {
    const audit = {
      outcome: 'denied' as const,
      reason: 'policy.rate_limit',
      consentShown: false,
      cost: '0',
      currency: 'USD',
      alert: false
    };
    expect(thenOf({ response: 'error', error: { code: -32003 }, audit })).toEqual({
      then: 'refused',
      label: 'policy.rate_limit'
    });
    expect(thenOf({ response: 'result', result: {}, audit: { ...audit, shadow: true } })).toEqual({
      then: 'served',
      label: 'served (shadow)'
    });
  });
});

describe('the audit rows behind each measure (the page filters its audit log to them)', () => {
  function rowsOf() {
    if (!scenario.ok) throw new Error(JSON.stringify(scenario.errors));
    const trace = parseTrace(TRACE);
    if (!trace.ok) throw new Error(trace.error);
    const w = new WhatIfCollector();
    const records: AuditRecord[] = [];
    const sim = new Simulation(scenario.scenario, {
      trace: trace.events,
      onAudit: (r) => {
        records.push(r);
        w.onAudit(r);
      },
      onTraceRequest: w.onTraceRequest
    });
    sim.advanceTo(sim.end);
    return { rows: w.rows(trace.events), records };
  }

  it('names exactly the lanes’ rows each measure counts, and both lanes’ rows of a changed request', () => {
    const { rows, records } = rowsOf();
    const { measures, changed } = whatIfAuditRows(rows);
    const byKey = new Map(records.map((r) => [`${r.lane}\u0000${r.seq}`, r]));
    const of = (group: string, m: string) =>
      (measures.get(group)?.get(m) ?? []).map((k) => {
        const r = byKey.get(k)!;
        return `${r.lane} ${r.server} ${r.reason ?? r.outcome}`;
      });
    // research's r1: served then, refused by policy in lane B only.
    expect(of('research', 'servedThenRefusedNow')).toEqual(['B research policy.sampling_disabled']);
    expect(of('research', 'by:policy.sampling_disabled')).toEqual([
      'B research policy.sampling_disabled'
    ]);
    // r2 in A; m3 in B.
    expect(of('', 'refusedThenServedNow').sort()).toEqual(['A research allowed', 'B mail allowed']);
    // m4, no answer logged: one row per lane.
    expect(of('mail', 'noneThen').sort()).toEqual(['A mail policy.rate_limit', 'B mail allowed']);
    // Lane B asked about each mail request: four dialogs.
    expect(of('mail', 'consent')).toHaveLength(4);
    expect(of('', 'requests')).toHaveLength(12);
    expect(of('mail', 'refused').sort()).toEqual([
      'A mail policy.rate_limit',
      'A mail policy.rate_limit'
    ]);
    // The four changed requests, each lane's row of each.
    expect(changed).toHaveLength(8);
    expect(new Set(changed.map((k) => byKey.get(k)!.server))).toEqual(
      new Set(['mail', 'research'])
    );
    // Another run of the same scenario and trace: the same rows, by the same keys.
    expect(whatIfAuditRows(rowsOf().rows)).toEqual({ measures, changed });
  });
});
