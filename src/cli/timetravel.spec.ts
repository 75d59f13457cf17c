import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commands, runCommand } from './commands';
import { parseSpan } from './io';

async function lab(args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCommand(commands.run!, args, {
    out: (s) => void (stdout += s),
    err: (s) => void (stderr += s),
    stdin: async () => ''
  });
  return { code, stdout, stderr };
}

const S = 'static/scenarios/reconnect-bypass.json';

describe('lab run --break', () => {
  it('stops at the first alert and prints its facts as JSON, exit 4', async () => {
    const out = mkdtempSync(join(tmpdir(), 'lab-break-'));
    const r = await lab(['static/scenarios/retryable-loop.json', '--break', 'alert', '--out', out]);
    expect(r.code).toBe(4);
    const facts = JSON.parse(r.stdout);
    expect(facts.condition).toBe('alert');
    expect(facts.audit.alert).toBe(true);
    expect(facts.path.at(-1)).toBe('sent');
    expect(facts.request.params.messages.length).toBeGreaterThan(0);
    expect(facts.policyBlock).toHaveProperty('consent');
    // The files end at the request the run stopped on; nothing after it was written.
    const audit = readFileSync(join(out, 'audit.jsonl'), 'utf8').trim().split('\n');
    expect(JSON.parse(audit.at(-1)!)).toEqual(facts.audit);
    expect(audit.slice(0, -1).every((l) => !JSON.parse(l).alert)).toBe(true);
    const frames = readFileSync(join(out, 'frames.jsonl'), 'utf8').trim().split('\n');
    expect(JSON.parse(frames.at(-1)!).frame).toEqual(facts.frame);
  });

  it('consent stops as a dialog opens: the request mid-flight, waiting on the user, exit 4', async () => {
    const out = mkdtempSync(join(tmpdir(), 'lab-break-consent-'));
    const r = await lab([S, '--break', 'consent@A', '--out', out]);
    expect(r.code).toBe(4);
    const facts = JSON.parse(r.stdout);
    expect(facts).toMatchObject({ condition: 'consent@A', lane: 'A', phase: 'consent' });
    expect(facts.outcome).toBeNull();
    expect(facts.audit).toBeNull();
    expect(facts.path.at(-1)).toBe('consenting');
    expect(facts.request.params.messages.length).toBeGreaterThan(0);
    expect(typeof facts.identity).toBe('string');
    // The request was received (its frame is in) and has no answer and no record yet.
    const frames = readFileSync(join(out, 'frames.jsonl'), 'utf8').trim().split('\n');
    const mine = frames
      .map((l) => JSON.parse(l))
      .filter((f) => f.connection === facts.request.connection && f.frame.id === facts.request.id);
    expect(mine.map((f) => f.direction)).toEqual(['in']);
    const audit = readFileSync(join(out, 'audit.jsonl'), 'utf8').trim().split('\n');
    expect(
      audit.filter(Boolean).some((l) => {
        const a = JSON.parse(l);
        return (
          a.lane === 'A' &&
          a.connection === facts.request.connection &&
          a.requestId === facts.request.id
        );
      })
    ).toBe(false);
  });

  it('takes several conditions and a lane; one that never holds runs to the end, exit 0', async () => {
    const r = await lab([S, '--break', 'spend>100000', '--break', 'outcome:budget_exceeded@B']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/consent prompts/);
    const hit = await lab([S, '--break', 'spend>100000', '--break', 'reason:user.denied@B']);
    expect(hit.code).toBe(4);
    expect(JSON.parse(hit.stdout)).toMatchObject({
      condition: 'reason:user.denied@B',
      lane: 'B',
      reason: 'user.denied'
    });
  });

  it.each([
    [['--break', 'alarm'], 'unknown condition "alarm"'],
    [['--break', 'alert@C'], '"@C" is not a lane'],
    [['--restart-at', '3x'], '"3x" is not a time such as 30m'],
    [['--restart-at', '2h'], "--restart-at 2 h is past the scenario's end (1 h)"]
  ])('refuses %j in one line, exit 2', async (args, message) => {
    const r = await lab([S, ...args]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(message);
  });

  it('documents the syntax and the exit codes in its usage', () => {
    expect(commands.run!.usage).toContain('--break COND');
    expect(commands.run!.usage).toContain('spend>AMOUNT');
    expect(commands.run!.usage).toContain('4 stopped at a breakpoint');
  });
});

describe('lab run --restart-at', () => {
  it('restarts the client at that virtual time: the summary and the marks say what each lane lost', async () => {
    const out = mkdtempSync(join(tmpdir(), 'lab-restart-'));
    const r = await lab([S, '--restart-at', '30m', '--restart-at', '45m', '--out', out]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /at \+30 min: Client restarted: lane A lost \d+ stored decisions?, lane B kept \d+/
    );
    expect(r.stdout).toMatch(/at \+45 min: Client restarted/);
    const metrics = JSON.parse(readFileSync(join(out, 'metrics.json'), 'utf8'));
    const start = Date.parse(metrics.start);
    const marks = metrics.marks.filter((m: { kind?: string }) => m.kind === 'restart');
    expect(marks.map((m: { t: number; lane: string }) => [m.t - start, m.lane])).toEqual([
      [1_800_000, 'A'],
      [1_800_000, 'B'],
      [2_700_000, 'A'],
      [2_700_000, 'B']
    ]);
    // The same run without the flag differs; with it, it is the same every time.
    const again = await lab([S, '--restart-at', '30m,45m']);
    expect(again.stdout).toBe(r.stdout);
    expect((await lab([S])).stdout).not.toBe(r.stdout);
  });

  it('reads times as typed', () => {
    expect(parseSpan('30m')).toBe(1_800_000);
    expect(parseSpan('1h30m')).toBe(5_400_000);
    expect(parseSpan('90s')).toBe(90_000);
    expect(parseSpan('1500ms')).toBe(1_500);
    expect(parseSpan('1500')).toBe(1_500);
    expect(parseSpan('2d')).toBe(172_800_000);
    expect(parseSpan('soon')).toBeNull();
    expect(parseSpan('-5m')).toBeNull();
  });
});
