/**
 * `lab run` / `lab replay` under the invariants: the summary lists every guarantee; a broken one
 * is one line on standard error naming it and the request, with exit code 3.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadScenario, reportRun, runAndWrite } from './run';

describe('lab run under its invariants', () => {
  it('lists the guarantees under the summary, checks two runs with --twice, exits 0', () => {
    const out = `/tmp/lab-run-spec-${process.pid}`;
    const r = spawnSync(
      'npx',
      [
        'tsx',
        'src/cli/main.ts',
        'run',
        'static/scenarios/rfc-budget-caps.json',
        '--twice',
        '--out',
        out
      ],
      { encoding: 'utf8' }
    );
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const lines = r.stdout.split('\n');
    const at = lines.indexOf('guarantees');
    expect(at).toBeGreaterThan(0);
    expect(lines.slice(at + 1, at + 13).map((l) => l.trim().split(/\s+/).slice(0, 2))).toEqual([
      ['✓', 'one-frame'],
      ['✓', 'one-consent'],
      ['✓', 'no-overdraw'],
      ['✓', 'call-within-limit'],
      ['✓', 'tokens-paid'],
      ['✓', 'loops-flagged'],
      ['✓', 'replays-no-model'],
      ['✓', 'verdicts-only'],
      ['✓', 'denials-true'],
      ['✓', 'frames-conform'],
      ['✓', 'totals-match'],
      ['✓', 'same-bytes']
    ]);
    expect(r.stdout).toContain('18 of 18 requests answered');
    expect(r.stdout).toContain('two runs, byte-identical frames and audit');
    const metrics = JSON.parse(readFileSync(`${out}/metrics.json`, 'utf8'));
    expect(metrics.guarantees).toHaveLength(12);
    expect(metrics.guarantees[0]).toMatchObject({ id: 'one-frame', status: 'held', violations: 0 });
  });

  it('a broken guarantee: one line naming it and the request on stderr, exit code 3', () => {
    const scenario = loadScenario('static/scenarios/rfc-budget-caps.json');
    // A validator that refuses every error frame: the first one sent breaks frames-conform.
    const outcome = runAndWrite({
      scenario,
      validate: (f) => ('error' in f ? 'refused by the test' : null)
    });
    expect(outcome.text).toMatch(/✗ frames-conform +\d+ of 18 frames conform/);
    expect(outcome.broken).toMatch(
      /^invariant frames-conform broken: refused by the test \(lane [AB], request [^ ]+#1\/1, audit seq \d+\), and \d+ more$/
    );
    const out: string[] = [];
    const err: string[] = [];
    expect(reportRun(outcome, { out: (s) => out.push(s), err: (s) => err.push(s) })).toBe(3);
    expect(out).toEqual([outcome.text + '\n']);
    expect(err).toEqual([`lab: ${outcome.broken}\n`]);
  });
});
