import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  compareAnswer,
  fillTemplate,
  formatMetric,
  mergePatch,
  parseLesson,
  predictOutcome,
  templateErrors,
  type LessonInput
} from './lessons';
import { emptyCounters } from '../engine/metrics';
import { parseScenario } from './scenario';

const DIR = 'static/lessons';
const FILES = readdirSync(DIR).filter((f) => f.endsWith('.json'));

function valid(): LessonInput {
  return JSON.parse(readFileSync(`${DIR}/reconnect-bypass.json`, 'utf8')) as LessonInput;
}

function lanes() {
  const A = emptyCounters();
  const B = emptyCounters();
  A.consentPrompts = 1236;
  B.consentPrompts = 14;
  A.spendMicros = 36525;
  A.frames.denied = 3;
  A.silenced = 4;
  return { A, B };
}

describe('the lesson files', () => {
  it.each(FILES)('%s parses, names its scenario, and its Try patch gives a valid scenario', (f) => {
    const r = parseLesson(readFileSync(`${DIR}/${f}`, 'utf8'));
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    expect(`${r.lesson.name}.json`).toBe(f);
    const scenario = JSON.parse(
      readFileSync(`static/scenarios/${r.lesson.scenario}.json`, 'utf8')
    ) as unknown;
    expect(parseScenario(scenario).ok).toBe(true);
    const tried = parseScenario(mergePatch(scenario, r.lesson.try.patch));
    expect(tried.ok && JSON.stringify(tried.scenario.data)).not.toBe(
      JSON.stringify((parseScenario(scenario) as { scenario: { data: unknown } }).scenario.data)
    );
  });

  it('have distinct teaching orders', () => {
    const orders = FILES.map(
      (f) => (JSON.parse(readFileSync(`${DIR}/${f}`, 'utf8')) as { order: number }).order
    );
    expect(new Set(orders).size).toBe(orders.length);
  });
});

describe('parseLesson', () => {
  it('names the JSON path of a bad member', () => {
    const bad = { ...valid(), chart: 'nope', metrics: [] };
    const r = parseLesson(bad);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.map((e) => e.path).sort()).toEqual(['$.chart', '$.metrics']);
  });

  it('names an unknown metric in a prediction', () => {
    const l = valid();
    const r = parseLesson({
      ...l,
      predict: { kind: 'number', question: 'How many?', metric: 'A.nope' }
    });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.errors[0]!.path).toBe('$.predict.metric');
      expect(r.errors[0]!.message).toMatch(/unknown metric/);
    }
  });

  it('refuses a placeholder that names no metric, at its path', () => {
    const l = valid();
    const r = parseLesson({
      ...l,
      explain: 'Lane A showed {A.consentPrompts} and {C.prompts}.',
      try: { ...l.try, explain: '{B.spend}' }
    });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.errors.map((e) => e.path)).toEqual(['$.explain', '$.try.explain']);
      expect(r.errors[0]!.message).toContain('{C.prompts}');
      expect(r.errors[1]!.message).toContain('{B.spend}');
    }
  });

  it('reports JSON that does not parse', () => {
    const r = parseLesson('{');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors[0]!.path).toBe('$');
  });

  it('refuses unknown members', () => {
    const r = parseLesson({ ...valid(), colour: 'red' });
    expect(r.ok).toBe(false);
  });
});

describe('fillTemplate', () => {
  it('fills lane metrics from the counters, money as the CLI prints it', () => {
    expect(
      fillTemplate(
        'A {A.consentPrompts}, B {B.consentPrompts}, {A.spendMicros}, {A.denied}',
        lanes()
      )
    ).toBe('A 1,236, B 14, $0.0365, 7');
  });

  it('leaves text without placeholders, and unknown ones, as written', () => {
    expect(fillTemplate('no numbers {here}', lanes())).toBe('no numbers {here}');
    expect(templateErrors('{A.requests} {here}')).toEqual(['{here}']);
  });

  it('formats money and counts', () => {
    expect(formatMetric('serverSpendMicros', 885306)).toBe('$0.8853');
    expect(formatMetric('requests', 1234567)).toBe('1,234,567');
  });
});

describe('predictions', () => {
  it('a number: the named lane metric, with the answer beside it', () => {
    const p = { kind: 'number', question: '?', metric: 'A.consentPrompts' } as const;
    const o = predictOutcome(p, lanes());
    expect(o).toEqual({ kind: 'number', value: 1236 });
    expect(compareAnswer(p, 1236, o)).toBe('You said 1,236; this run: 1,236. Exactly right.');
    expect(compareAnswer(p, 1000, o)).toBe('You said 1,000; this run: 1,236. Close.');
    expect(compareAnswer(p, 10, o)).toBe('You said 10; this run: 1,236.');
    expect(compareAnswer(p, undefined, o)).toBe('This run: 1,236.');
  });

  it('a lane: which lane ends with more', () => {
    const p = { kind: 'lane', question: '?', metric: 'consentPrompts' } as const;
    const o = predictOutcome(p, lanes());
    expect(o).toEqual({ kind: 'lane', lane: 'A' });
    expect(compareAnswer(p, 'A', o)).toBe('You said lane A; this run: lane A. Right.');
    expect(compareAnswer(p, 'same', o)).toBe('You said about the same; this run: lane A.');
    expect(compareAnswer(p, undefined, o)).toBe('This run: lane A.');
    const tie = predictOutcome({ ...p, metric: 'replays' }, lanes());
    expect(tie).toEqual({ kind: 'lane', lane: 'same' });
  });
});

describe('mergePatch (RFC 7396)', () => {
  it('merges objects, deletes on null, replaces arrays and scalars, and copies', () => {
    const target = { a: { b: 1, c: [1, 2] }, d: 'x', e: { f: 1 } };
    const out = mergePatch(target, { a: { c: [3] }, d: null, e: { g: 2 } });
    expect(out).toEqual({ a: { b: 1, c: [3] }, e: { f: 1, g: 2 } });
    expect(target.d).toBe('x');
    expect(mergePatch({ a: 1 }, [1])).toEqual([1]);
    expect(mergePatch('s', { a: 1 })).toEqual({ a: 1 });
  });
});

describe('a lesson’s refusal matrix', () => {
  const withMatrix = (explain: string): LessonInput => ({
    ...valid(),
    matrix: { lane: 'B', explain }
  });

  it('accepts {STYLE.COLUMN} placeholders', () => {
    const r = parseLesson(withMatrix('{vscode.reconnects} and {python-default.spendMicros}'));
    expect(r.ok).toBe(true);
  });

  it('refuses an unknown style or column at $.matrix.explain, saying what exists', () => {
    const style = parseLesson(withMatrix('{zed.retries}'));
    expect(style.ok).toBe(false);
    if (style.ok) return;
    expect(style.errors[0]!.path).toBe('$.matrix.explain');
    expect(style.errors[0]!.message).toMatch(/\{zed\.retries\}.*STYLE one of lab, spec, vscode/);
    const column = parseLesson(withMatrix('{lab.prompts}'));
    expect(column.ok).toBe(false);
    if (column.ok) return;
    expect(column.errors[0]!.message).toMatch(/no column "prompts".*consentPrompts/);
  });

  it('refuses a lane that is not A or B', () => {
    const r = parseLesson({ ...valid(), matrix: { lane: 'C', explain: 'x' } } as never);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors[0]!.path).toBe('$.matrix.lane');
  });
});
