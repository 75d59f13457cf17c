/**
 * Trace lines whose params hold a lone surrogate are refused with their path (issue #18): hashed
 * as U+FFFD, `"\ud800"` and `"\ufffd"` would share one identity and one stored decision.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parseTrace } from './trace';

const line = (text: string) =>
  `{"t":0,"server":"s","type":"request","params":{"messages":[{"role":"user","content":{"type":"text","text":"${text}"}}],"maxTokens":5}}`;

describe('lone surrogates in a request', () => {
  it('a trace line is refused with the path to the text', () => {
    const r = parseTrace(line('half \\ud800 a pair'));
    expect(r.ok ? 'accepted' : r.error).toMatch(
      /^line 1: \$\.params\.messages\[0\]\.content\.text: contains a lone surrogate \(half of a UTF-16 pair\)/
    );
    // A whole pair, and U+FFFD written out, are text like any other.
    expect(parseTrace(line('\\ud83d\\ude00 \\ufffd')).ok).toBe(true);
  });

  it('`lab identity` refuses it in one line, exit 2', () => {
    const r = spawnSync('npx', ['tsx', 'src/cli/main.ts', 'identity', '--server', 's'], {
      input: '{"messages":[],"systemPrompt":"a\\udfffb"}',
      encoding: 'utf8'
    });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim()).toMatch(/^lab: identity: \$\.systemPrompt: contains a lone surrogate/);
  });
});

describe('a request’s `logged` member (an imported log’s answer)', () => {
  const withLogged = (logged: string) =>
    `{"t":0,"server":"s","type":"request","params":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":5},"logged":${logged}}`;

  it('is optional: a trace without it parses as before', () => {
    const r = parseTrace(line('hi'));
    expect(r.ok && r.events[0]!.logged).toBe(undefined);
  });

  it('carries a result, an error or none', () => {
    for (const logged of [
      '{"response":"result","afterMs":1200,"result":{"model":"m","stopReason":"endTurn"}}',
      '{"response":"error","error":{"code":-32000,"message":"User rejected sampling request","data":{"x":1}}}',
      '{"response":"none"}'
    ]) {
      const r = parseTrace(withLogged(logged));
      expect(r.ok ? r.events[0]!.logged : r.error).toEqual(JSON.parse(logged));
    }
  });

  it.each([
    ['{"response":"result"}', 'line 1: $.logged.result: a "result" response needs "result"'],
    [
      '{"response":"none","error":{"code":1}}',
      'line 1: $.logged.error: only a "error" response carries "error" (this one is "none")'
    ],
    ['{"response":"error","error":{"code":1.5}}', /^line 1: \$\.logged\.error\.code: /],
    ['{"response":"maybe"}', /^line 1: \$\.logged\.response: /],
    ['{"response":"none","note":1}', /^line 1: \$\.logged\.note: unknown member/]
  ])('%s is refused with its path', (logged, error) => {
    const r = parseTrace(withLogged(logged));
    expect(r.ok ? 'accepted' : r.error).toMatch(error);
  });
});
