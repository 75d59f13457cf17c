import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { requestIdentity } from '../lib/machine/identity';

function lab(args: string[], input = '') {
  const r = spawnSync('npx', ['tsx', 'src/cli/main.ts', ...args], { input, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const params = {
  systemPrompt: 'You summarise release notes.',
  messages: [{ role: 'user', content: { type: 'text', text: 'Summarise 2.3, café edition.' } }],
  includeContext: 'thisServer',
  maxTokens: 500
};

describe('lab identity', () => {
  it('prints NAME:<32 hex>, the same identity the client computes', () => {
    const r = lab(['identity', '--server', 'release-notes'], JSON.stringify(params));
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(requestIdentity('release-notes', params));
    expect(r.stdout.trim()).toMatch(/^release-notes:[0-9a-f]{32}$/);
  });

  it('is insensitive to key order, whitespace and \\u escapes', () => {
    const text = `{ "maxTokens": 1, "messages": [ { "content": { "text": "Summarise 2.3, caf\\u00e9 edition.", "type": "text" }, "role": "user" } ],
      "includeContext": "thisServer", "systemPrompt": "You summarise release notes." }`;
    expect(lab(['identity', '--server', 'release-notes'], text).stdout.trim()).toBe(
      requestIdentity('release-notes', params)
    );
  });

  it('rejects invalid JSON with one line on stderr and exit code 2', () => {
    const r = lab(['identity', '--server', 'x'], '{"messages": [');
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^lab: identity: standard input is not valid JSON/);
  });

  it('requires --server', () => {
    const r = lab(['identity'], '{}');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--server NAME is required');
  });
});
