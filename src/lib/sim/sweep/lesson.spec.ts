/**
 * A lesson whose Explain quotes a sweep: the lesson names a ready-made sweep, its placeholders
 * are checked against that sweep's grid and metrics (one line each, naming where and what), and
 * the text is filled from the sweep's results.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseLesson } from '../input/lessons';
import {
  fillSweepTemplate,
  parseLessonWithSweeps,
  parseSweep,
  parseSweepQuote,
  type Sweep,
  type SweepResults
} from '.';
import { summarise } from './results';

const ready: Record<string, Sweep> = Object.fromEntries(
  readdirSync('static/sweeps')
    .filter((f) => f.endsWith('.json'))
    .map((f) => {
      const r = parseSweep(readFileSync(`static/sweeps/${f}`, 'utf8'));
      if (!r.ok) throw new Error(JSON.stringify(r.errors));
      return [f.replace(/\.json$/, ''), r.sweep];
    })
);

const lessonText = readFileSync('static/lessons/reconnect-bypass.json', 'utf8');
const lesson = JSON.parse(lessonText) as Record<string, unknown>;

function sweep(): Sweep {
  const r = parseSweep({
    version: 1,
    scenario: 'x.json',
    grid: {
      'lanes.A.client.store': ['connection', 'durable'],
      'lanes.A.policy.defaults.rateLimit': [null, { requests: 5, windowMs: 60000 }]
    },
    seeds: [1, 2],
    objectives: { 'A.consentPrompts': 'min', 'A.spendMicros': 'min' },
    constraints: ['guarantee.one-consent == 0']
  });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.sweep;
}

/** Four points (connection/null, connection/5, durable/null, durable/5), two seeds each. */
function results(): SweepResults {
  const prompts = [
    [100, 120],
    [40, 50],
    [10, 12],
    [11, 13]
  ];
  const spend = [
    [30000, 31000],
    [5000, 5001],
    [700, 701],
    [702, 703]
  ];
  return {
    points: prompts.map((p, i) => ({
      settings: {},
      metrics: { 'A.consentPrompts': summarise(p), 'A.spendMicros': summarise(spend[i]!) },
      feasible: true,
      unmet: [],
      guarantees: {},
      broken: []
    })),
    pareto: [2]
  };
}

const fill = (t: string) => fillSweepTemplate(t, sweep(), 2, results());

describe('sweep quotes in a lesson', () => {
  it('fill the means, minima and maxima of the picked points, and the counts', () => {
    expect(fill('{A.consentPrompts @ store=connection}')).toBe('77.5');
    expect(fill('{min(A.consentPrompts) @ store=connection}')).toBe('40');
    expect(fill('{max(A.consentPrompts) @ store=durable}')).toBe('13');
    expect(fill('{A.consentPrompts @ store=durable, rateLimit=null}')).toBe('11');
    expect(fill('{A.consentPrompts @ store=connection, rateLimit=#2}')).toBe('45');
    expect(
      fill('{A.consentPrompts @ lanes.A.client.store="durable", rateLimit={"requests":5}}')
    ).toBe(
      // Braces end a placeholder: an object is named by #N, so this stays as written.
      '{A.consentPrompts @ lanes.A.client.store="durable", rateLimit={"requests":5}}'
    );
    expect(fill('{A.consentPrompts @ lanes.A.client.store="durable"}')).toBe('11.5');
    expect(fill('{A.consentPrompts}')).toBe('44.5');
    // Money as the CLI prints it, from the rounded mean of micro-dollars.
    expect(fill('{A.spendMicros @ store=connection, rateLimit=null}')).toBe('$0.0305');
    expect(
      fill('{sweep.points} points, {sweep.seeds} seeds, {sweep.runs} runs, {sweep.front}')
    ).toBe('4 points, 2 seeds, 8 runs, 1');
    expect(fill('no numbers here')).toBe('no numbers here');
  });

  it.each([
    ['A.nope', /unknown metric/],
    [
      'A.consentPrompts @ store=disk',
      /no point with lanes\.A\.client\.store = "disk"; its values: "connection", "durable"/
    ],
    ['A.consentPrompts @ colour=red', /no grid key "colour"; its keys: lanes\.A\.client\.store/],
    ['A.consentPrompts @ rateLimit=#3', /has 2 values: #3 is not one/],
    ['A.consentPrompts @ store', /"store" is not key=value/],
    ['guarantee.denials-true', /does not report guarantee\.denials-true/],
    ['sweep.best', /sweep\.best is not a count/],
    ['median(A.replays)', /not a sweep quote/]
  ])('refuses {%s} in one line', (text, message) => {
    const r = parseSweepQuote(text, sweep());
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error).toMatch(message);
      expect(r.error).not.toContain('\n');
    }
  });

  it('a guarantee the sweep names is quotable', () => {
    expect(parseSweepQuote('max(guarantee.one-consent)', sweep()).ok).toBe(true);
  });
});

describe('parseLessonWithSweeps', () => {
  it.each(readdirSync('static/lessons').filter((f) => f.endsWith('.json')))(
    '%s parses against the ready-made sweeps',
    (f) => {
      const r = parseLessonWithSweeps(readFileSync(`static/lessons/${f}`, 'utf8'), ready);
      if (!r.ok) throw new Error(JSON.stringify(r.errors));
    }
  );

  it('accepts the reconnect-bypass lesson against the ready-made sweeps', () => {
    const r = parseLessonWithSweeps(lessonText, ready);
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(r.lesson.sweep).toBe('reconnect-bypass');
  });

  it('names an unknown sweep at $.sweep, with the ones there are', () => {
    const r = parseLessonWithSweeps({ ...lesson, sweep: 'no-such-sweep' }, ready);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.errors).toHaveLength(1);
      expect(r.errors[0]!.path).toBe('$.sweep');
      expect(r.errors[0]!.message).toMatch(
        /^no ready-made sweep "no-such-sweep" in static\/sweeps\/; there are: .*reconnect-bypass/
      );
    }
  });

  it('names a placeholder the sweep cannot fill at $.sweepExplain', () => {
    const r = parseLessonWithSweeps(
      {
        ...lesson,
        sweepExplain:
          'Fine {A.consentPrompts @ store=durable}; {A.spendMicros @ store=disk}; {A.prompts}'
      },
      ready
    );
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.errors.map((e) => e.path)).toEqual(['$.sweepExplain', '$.sweepExplain']);
      expect(r.errors[0]!.message).toMatch(
        /^placeholder "\{A\.spendMicros @ store=disk\}": the sweep has no point with lanes\.A\.client\.store = "disk"/
      );
      expect(r.errors[1]!.message).toMatch(/^placeholder "\{A\.prompts\}": .*unknown metric/);
    }
  });

  it('needs sweep and sweepExplain together (parseLesson alone checks that)', () => {
    const { sweepExplain: _text, ...noText } = lesson;
    const a = parseLesson(noText);
    expect(!a.ok && a.errors[0]).toEqual({
      path: '$.sweep',
      message: 'needs "sweepExplain": the text that quotes the sweep'
    });
    const { sweep: _name, ...noName } = lesson;
    const b = parseLesson(noName);
    expect(!b.ok && b.errors[0]!.path).toBe('$.sweepExplain');
  });

  it('leaves a lesson without a sweep as parseLesson reads it', () => {
    const text = readFileSync('static/lessons/cheap-calls.json', 'utf8');
    expect(parseLessonWithSweeps(text, {})).toEqual(parseLesson(text));
  });
});
