import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DENIAL_STYLES } from '../../machine/refusal-styles';
import { Simulation } from '../engine/engine';
import type { ErrorFrame } from '../../machine/types';
import { sdkFrameProblem } from '../checks/conformance';
import type { FrameLine } from '../engine/engine';
import { guardedSimulation } from '../checks/guard';
import { parseLesson } from '../input/lessons';
import { refusalMatrix } from './refusal-matrix';
import { fillMatrixTemplate, formatCell, type MatrixRow } from './refusal-matrix-text';
import { parseScenario } from '../input/scenario';

const file = 'static/scenarios/refusal-codes.json';
const data = JSON.parse(readFileSync(file, 'utf8')) as {
  lanes: { B: { client: Record<string, unknown> } };
};

describe('the refusal matrix: one population, six refusal styles', () => {
  const m = refusalMatrix(data, 'B');
  if (!m.ok) throw new Error(JSON.stringify(m.errors));
  const row = (s: string) => m.rows.find((r) => r.style === s)!;

  it('has one row per style, in the styles’ order, each its own code', () => {
    expect(m.rows.map((r) => [r.style, r.code])).toEqual([
      ['lab', -32003],
      ['spec', -1],
      ['vscode', -32000],
      ['inspector', -32603],
      ['python-default', -32600],
      ['cursor', -32601]
    ]);
  });

  it('each row is the lane’s own run with that style', () => {
    for (const style of DENIAL_STYLES) {
      const d = structuredClone(data);
      d.lanes.B.client = { ...d.lanes.B.client, denialStyle: style };
      const r = parseScenario(d);
      if (!r.ok) throw new Error('bad');
      const sim = new Simulation(r.scenario);
      sim.runToEnd();
      const c = sim.lanes.B.metrics.counters;
      expect(row(style)).toMatchObject({
        requests: c.requests,
        retries: c.retries,
        reconnects: c.reconnects,
        consentPrompts: c.consentPrompts,
        abandoned: c.abandoned,
        spendMicros: c.spendMicros
      });
    }
  });

  it('only the lab’s typed refusal lets every server stop; only -32000 makes them reconnect', () => {
    expect(row('lab').reconnects).toBe(0);
    expect(row('vscode').reconnects).toBe(row('vscode').refusals);
    for (const s of ['spec', 'inspector', 'python-default', 'cursor']) {
      expect(row(s).reconnects).toBe(0);
      // The well-behaved servers retry a code they cannot read; the lab's refusal they obey.
      expect(row(s).retries).toBeGreaterThan(row('lab').retries);
    }
    expect(row('vscode').consentPrompts).toBeGreaterThan(row('lab').consentPrompts);
  });
});

/** Lane B of refusal-codes run in `style`, guarded: its frames, audit and guarantees. */
function guarded(style: string) {
  const d = structuredClone(data);
  d.lanes.B.client = { ...d.lanes.B.client, denialStyle: style };
  const r = parseScenario(d);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  const frames: FrameLine[] = [];
  const audit: { server: string; identity: string }[] = [];
  const { sim, guard } = guardedSimulation(
    r.scenario,
    {
      onFrame: (l) => frames.push(l),
      onAudit: (a) =>
        void (a.lane === 'B' && audit.push({ server: a.server, identity: a.identity }))
    },
    { validate: sdkFrameProblem }
  );
  sim.runToEnd();
  // A well-behaved server's requests, and how many distinct ones (a task's retry repeats it).
  const notes = audit.filter((a) => a.server.startsWith('notes-'));
  const wellBehaved = { requests: notes.length, tasks: new Set(notes.map((a) => a.identity)).size };
  return { sim, frames, wellBehaved, guarantees: guard.results() };
}

describe('the lesson’s matrix text (static/lessons/refusal-codes.json): every claim it makes', () => {
  const l = parseLesson(readFileSync('static/lessons/refusal-codes.json', 'utf8'));
  if (!l.ok) throw new Error(JSON.stringify(l.errors));
  const m = refusalMatrix(data, l.lesson.matrix!.lane);
  if (!m.ok) throw new Error(JSON.stringify(m.errors));
  const row = (s: string) => m.rows.find((r) => r.style === s)!;
  const unread = ['spec', 'python-default', 'cursor', 'inspector'];

  it('fills every placeholder from the matrix', () => {
    const text = fillMatrixTemplate(l.lesson.matrix!.explain, m.rows);
    expect(text).not.toMatch(/[{}]/);
    expect(text).toContain(`${formatCell(row('vscode'), 'reconnects')} reconnects`);
    expect(text).toContain(
      `${formatCell(row('vscode'), 'spendMicros')} spent against ${formatCell(row('lab'), 'spendMicros')}`
    );
  });

  it('lab: the well-behaved servers stop at the first no; every retry is a naive retrier’s', () => {
    const { wellBehaved } = guarded('lab');
    // One request per well-behaved task: none of the lab's retries is theirs.
    expect(wellBehaved.tasks).toBeGreaterThan(0);
    expect(wellBehaved.requests).toBe(wellBehaved.tasks);
    expect(row('lab').retries).toBeGreaterThan(0);
    expect(row('lab').reconnects).toBe(0);
  });

  it('the unreadable codes: more retries, on the same connection, answered from the store; the same prompts and abandoned tasks as the lab’s', () => {
    for (const s of unread) {
      expect(row(s).retries).toBeGreaterThan(row('lab').retries);
      expect(row(s).requests).toBeGreaterThan(row('lab').requests);
      expect(row(s).reconnects).toBe(0);
      expect(row(s).consentPrompts).toBe(row('lab').consentPrompts);
      expect(row(s).abandoned).toBe(row('lab').abandoned);
      const g = guarded(s);
      // The well-behaved servers retried too, and the retries met the stored refusal: replays,
      // not fresh questions.
      expect(g.wellBehaved.requests).toBeGreaterThan(g.wellBehaved.tasks);
      expect(g.sim.lanes.B.metrics.counters.replays).toBeGreaterThanOrEqual(row(s).retries);
    }
  });

  it('vscode: reconnects, more prompts, fewer abandoned tasks (a tired yes), more spend', () => {
    const v = row('vscode');
    expect(v.reconnects).toBeGreaterThan(0);
    expect(v.consentPrompts).toBeGreaterThan(row('lab').consentPrompts);
    expect(v.abandoned).toBeLessThan(row('lab').abandoned);
    expect(v.completed).toBeGreaterThan(row('lab').completed);
    expect(v.spendMicros).toBeGreaterThan(row('lab').spendMicros);
  });

  it.each(DENIAL_STYLES)(
    '%s: every frame the SDK schemas accept; a foreign style is waived by name, never dropped',
    (style) => {
      const { frames, guarantees } = guarded(style);
      const conform = guarantees.find((g) => g.id === 'frames-conform')!;
      expect(conform).toMatchObject({ status: 'held', violations: 0 });
      expect(conform.checked).toBe(frames.filter((f) => f.direction === 'out').length);
      const refusals = frames
        .filter((f) => f.lane === 'B' && f.direction === 'out')
        .map((f) => f.frame)
        .filter((f): f is ErrorFrame => 'error' in f);
      const typed = guarantees.find((g) => g.id === 'refusals-typed');
      if (style === 'lab') expect(typed).toBeUndefined();
      else expect(typed).toMatchObject({ status: 'waived', checked: refusals.length });
    }
  );
});

describe('the matrix’s cells as the page shows them', () => {
  const r: MatrixRow = {
    style: 'vscode',
    code: -32000,
    client: 'VS Code',
    requests: 12345,
    refusals: 1,
    retries: 2,
    reconnects: 3,
    consentPrompts: 4,
    abandoned: 5,
    completed: 6,
    spendMicros: 30400
  };
  it('counts with commas, the code signed, spend in dollars as lab styles prints it', () => {
    expect(formatCell(r, 'requests')).toBe('12,345');
    expect(formatCell(r, 'code')).toBe('-32000');
    expect(formatCell(r, 'spendMicros')).toBe('$0.0304');
  });
  it('leaves a placeholder it cannot fill as written', () => {
    expect(fillMatrixTemplate('{vscode.retries} {lab.retries} {x.y}', [r])).toBe(
      '2 {lab.retries} {x.y}'
    );
  });
});
