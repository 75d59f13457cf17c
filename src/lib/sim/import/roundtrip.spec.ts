/**
 * A log written by the shipped handler round-trips (issue #22): real MCP SDK 1.x servers drive
 * `createSamplingPolicy` with an audit file; `lab import` turns that file into a trace; a replay
 * with the same policy gives every request the outcome, reason, consent dialog and alert the log
 * shows, in both lanes; and `lab replay`'s what-if report says nothing changed.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commands, runCommand } from '../../../cli/commands';
import { loadTrace } from '../../../cli/run';
import { createSamplingPolicy } from '../../handler/handler';
import { ask, outcome, pair } from '../../handler/sdk-pair.testing';
import { parseAuditJsonl } from '../../store/audit-export';
import { Simulation } from '../engine/engine';
import { parseScenario } from '../input/scenario';
import { WhatIfCollector } from '../report/whatif';

/** The scenario shipped beside the example audit log: its lane A is the handler's policy. */
const SCENARIO = 'static/traces/logs/handler-policy.json';
const scenario = parseScenario(readFileSync(SCENARIO, 'utf8'));
if (!scenario.ok) throw new Error(JSON.stringify(scenario.errors));
const lane = scenario.scenario.lanes.A;
const policy = lane.policy;
const client = { alert: lane.client.alert };

async function writeHandlerLog(file: string): Promise<void> {
  const lab = createSamplingPolicy({
    policy,
    client,
    audit: file,
    // Every dialog is refused, as the replay's simulated user below refuses them.
    consent: () => 'deny',
    sample: (_p, { model }) => ({ content: { type: 'text', text: 'done' }, model })
  });
  const send = async (p: Awaited<ReturnType<typeof pair>>, text: string, maxTokens = 200) =>
    outcome(p.server.createMessage(ask(text, { maxTokens })));
  // mail: three allowed, the fourth over the rate limit, twice; then a new connection, still over.
  let mail = await pair(lab, 'mail');
  for (const text of ['Draft a reply to Ana.', 'Draft a reply to Bo.', 'Summarise the thread.'])
    await send(mail, text);
  await send(mail, 'Translate the reply.');
  await send(mail, 'Translate the reply.');
  await mail.close();
  mail = await pair(lab, 'mail');
  await send(mail, 'Translate the reply.');
  await mail.close();
  // research: sampling is off; the server retries the same request (a retry loop).
  const research = await pair(lab, 'research');
  for (let i = 0; i < 5; i++) await send(research, 'Find papers on RAG.');
  await research.close();
  // notes: the person refuses; the second time the stored refusal answers.
  const notes = await pair(lab, 'notes');
  await send(notes, 'Condense my notes.');
  await send(notes, 'Condense my notes.');
  await notes.close();
  // reports: a per-call cap refuses the large request before the model runs; the small one is served.
  const reports = await pair(lab, 'reports');
  await send(reports, 'Write the quarterly report.', 20_000);
  await send(reports, 'Write a one-line status.', 100);
  await reports.close();
  await lab.close();
}

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    use: {
      out: (s: string) => void out.push(s),
      err: (s: string) => void err.push(s),
      stdin: () => Promise.reject(new Error('no stdin'))
    }
  };
}

describe('the handler’s audit log, imported and replayed with the same policy', () => {
  const dir = mkdtempSync(join(tmpdir(), 'roundtrip-'));
  const log = join(dir, 'handler-audit.jsonl');
  const trace = join(dir, 'trace.jsonl');

  it('round-trips: every outcome, reason, dialog and alert equal to the log’s', async () => {
    await writeHandlerLog(log);
    const written = parseAuditJsonl(readFileSync(log, 'utf8'));
    if (!written.ok) throw new Error(written.error);
    // 6 mail, 5 research, 2 notes, 2 reports.
    expect(written.records).toHaveLength(15);
    expect(written.records.map((r) => r.reason ?? r.outcome)).toEqual([
      ...['allowed', 'allowed', 'allowed', 'policy.rate_limit', 'policy.rate_limit'],
      'policy.rate_limit',
      ...Array(5).fill('policy.sampling_disabled'),
      ...['user.denied', 'user.denied'],
      ...['budget_exceeded', 'allowed']
    ]);
    expect(written.records.filter((r) => r.alert).length).toBeGreaterThan(0);

    const c = io();
    expect(await runCommand(commands.import!, [log, '--out', trace], c.use)).toBe(0);
    expect(c.err).toEqual([]);
    const printed = c.out.join('');
    expect(printed).toContain(`read ${log} (audit, 15 lines)`);
    expect(printed).toMatch(/^total +5 +15 +5 +10 +0$/m);
    expect(printed).toContain('skipped no lines');

    if (!scenario.ok) throw new Error('unreachable');
    const events = loadTrace(trace);
    const w = new WhatIfCollector();
    const sim = new Simulation(scenario.scenario, {
      trace: events,
      onAudit: w.onAudit,
      onTraceRequest: w.onTraceRequest
    });
    sim.advanceTo(sim.end);
    const rows = w.rows(events);
    expect(rows).toHaveLength(15);
    for (const lane of ['A', 'B'] as const) {
      expect(
        rows.map((r) => {
          const n = r.now[lane].record!;
          return [r.event.server, n.outcome, n.reason, n.consentShown, n.alert];
        })
      ).toEqual(
        written.records.map((r) => [r.server, r.outcome, r.reason, r.consentShown, r.alert])
      );
    }
  });

  it('lab replay’s what-if: nothing changed, dialogs and alerts then equal now', async () => {
    const out = join(dir, 'out');
    const c = io();
    const code = await runCommand(
      commands.replay!,
      [trace, '--scenario', SCENARIO, '--out', out],
      c.use
    );
    expect(c.err).toEqual([]);
    expect(code).toBe(0);
    const report = JSON.parse(readFileSync(join(out, 'whatif.json'), 'utf8'));
    expect(report.changed).toBe(0);
    for (const lane of ['A', 'B']) {
      const l = report.total.lanes[lane];
      expect([l.servedThenRefusedNow, l.refusedThenServedNow, l.undecided]).toEqual([0, 0, 0]);
      expect(l.consentNow).toBe(report.total.consentThen);
      expect(l.alertsNow).toBe(report.total.alertsThen);
    }
    expect(report.total.consentThen).toBe(1);
  });
});
