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
