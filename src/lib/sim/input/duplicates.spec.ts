/**
 * A member name given twice is refused with its path in every input (issue #19, item 5):
 * `"sampling": false, "sampling": true` ran with sampling on, while its author read it as off.
 * The CLI's and the page upload's own cases are in src/cli/inputs.spec.ts and tests/inputs.test.ts.
 */
import { readFileSync } from 'node:fs';
import lzString from 'lz-string';
import { describe, expect, it } from 'vitest';
import { parseFrame } from '../../machine/frame-parse';
import { parsePolicy } from '../../machine/policy';
import { decodeForkHash, decodeScenarioHash, HASH_PREFIX, FORK_PREFIX } from '../../ui/share';
import { loadLessons } from '../../ui/lessons/catalog';
import { parseFork } from '../engine/fork';
import { parseLesson } from './lessons';
import { parseScenario } from './scenario';
import { parseTrace } from './trace';

const { compressToEncodedURIComponent } = lzString;

const DUP = 'duplicate member "sampling"';
const scenarioText = readFileSync('static/scenarios/rfc-budget-caps.json', 'utf8');
const lessonText = readFileSync('static/lessons/budget-window.json', 'utf8');

/** The text with `"sampling": false, ` put before its first `"sampling": true`. */
function twice(text: string): string {
  const at = text.indexOf('"sampling": true');
  expect(at).toBeGreaterThan(0);
  return text.slice(0, at) + '"sampling": false, ' + text.slice(at);
}

const policyText = JSON.stringify(
  (JSON.parse(scenarioText) as { lanes: { A: { policy: unknown } } }).lanes.A.policy,
  null,
  2
);

describe('a member given twice, refused with its path', () => {
  it('a scenario (text, as a file or an upload gives it)', () => {
    const r = parseScenario(twice(scenarioText));
    expect(r.ok).toBe(false);
    expect(!r.ok && r.errors).toEqual([
      {
        path: '$.lanes.A.policy.defaults.sampling',
        message: expect.stringMatching(
          /^duplicate member "sampling" at line \d+, column \d+: JSON would silently keep only the last one$/
        )
      }
    ]);
  });

  it('a policy in the editor: with its line and column, for the underline', () => {
    const text = twice(policyText);
    const r = parsePolicy(text);
    expect(r.ok).toBe(false);
    const e = !r.ok ? r.errors.find((x) => x.message.startsWith(DUP)) : undefined;
    const at = text.indexOf('"sampling": true');
    const line = text.slice(0, at).split('\n').length;
    expect(e).toMatchObject({
      path: '$.defaults.sampling',
      line,
      column: at - text.lastIndexOf('\n', at - 1)
    });
  });

  it('a lesson, a fork', () => {
    const lesson = JSON.parse(lessonText) as { name: string };
    const text = lessonText.replace(
      `"name": ${JSON.stringify(lesson.name)}`,
      `"name": "x", "name": ${JSON.stringify(lesson.name)}`
    );
    expect(text).not.toBe(lessonText);
    const l = parseLesson(text);
    expect(!l.ok && l.errors[0]!.path).toBe('$.name');
    expect(() => loadLessons({ 'twice.json': text })).toThrow(
      /^twice\.json: \$\.name: duplicate member "name"/
    );
    const fork = twice(
      JSON.stringify(
        {
          version: 1,
          atMs: 0,
          lane: 'A',
          change: { kind: 'policy', policy: JSON.parse(policyText) }
        },
        null,
        1
      )
    );
    const f = parseFork(fork);
    expect(!f.ok && f.errors[0]!.path).toBe('$.change.policy.defaults.sampling');
  });

  it('a trace line, naming its line and column', () => {
    const trace = readFileSync('static/traces/reconnect-storm.jsonl', 'utf8').split('\n');
    trace[2] = trace[2]!.replace('"type":', '"type": "connect", "type":');
    const r = parseTrace(trace.join('\n'));
    expect(!r.ok && r.error).toMatch(
      /^line 3: \$\.type: duplicate member "type" at column \d+: JSON would silently keep only the last one$/
    );
  });

  it('a share link: the scenario, and the fork it carries', () => {
    const link = HASH_PREFIX + compressToEncodedURIComponent(twice(scenarioText));
    const s = decodeScenarioHash(link);
    expect(!s.ok && s.error).toMatch(
      /^the scenario link is corrupted: \$\.lanes\.A\.policy\.defaults\.sampling: duplicate member "sampling" at line \d+/
    );
    const fork = decodeForkHash(
      FORK_PREFIX + compressToEncodedURIComponent('{"lane": "A", "lane": "B"}')
    );
    expect(!fork.ok && fork.error).toBe(
      'the fork in the link: $.lane: duplicate member "lane" at line 1, column 15: JSON would silently keep only the last one'
    );
  });

  it('a response frame', () => {
    expect(parseFrame('{"jsonrpc": "2.0", "id": 1, "id": 2, "result": {}}')).toEqual({
      ok: false,
      error:
        '$.id: duplicate member "id" at line 1, column 29: JSON would silently keep only the last one'
    });
  });
});
