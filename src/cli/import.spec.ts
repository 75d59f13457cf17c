/**
 * `lab import`: what it prints for a real log, its one-line errors (exit 2), a large log streamed
 * with what it keeps bounded, and `lab replay` of the result printing the what-if report.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_SKIPS_KEPT } from '../lib/sim/import';
import { parseTrace } from '../lib/sim/input/trace';
import { commands, runCommand } from './commands';
import { importFiles } from './import';

const dir = mkdtempSync(join(tmpdir(), 'lab-import-'));

async function lab(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCommand(commands.import!, args, {
    out: (s) => void out.push(s),
    err: (s) => void err.push(s),
    stdin: () => Promise.reject(new Error('no stdin'))
  });
  return { code, out: out.join(''), err: err.join('') };
}

describe('lab import', () => {
  it('prints the servers, connections, sampling requests and answers, and each skipped line', async () => {
    const trace = join(dir, 'weather.jsonl');
    const r = await lab([
      'static/traces/logs/mcp-server-weather.log',
      'static/traces/logs/mcp.log',
      '--out',
      trace
    ]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^weather +2 +6 +1 +4 +1$/m);
    expect(r.out).toMatch(/^research +1 +3 +2 +1 +0$/m);
    expect(r.out).toMatch(/^total +4 +10 +4 +5 +1$/m);
    expect(r.out).toContain('errors by code: -32000 ×4, -32603 ×1');
    expect(r.out).toContain('from 2025-07-20T13:44:16.395Z');
    expect(r.out).toContain('skipped 5 lines:');
    expect(r.out).toContain(
      'static/traces/logs/mcp-server-weather.log:29: the message is cut off (its JSON object never closes)'
    );
    expect(r.out).toContain('static/traces/logs/mcp.log:9: a line about no server in particular');
    expect(r.out).toContain(`wrote 16 events to ${trace}`);
    const parsed = parseTrace(readFileSync(trace, 'utf8'));
    expect(parsed.ok && parsed.events.filter((e) => e.type === 'request')).toHaveLength(10);
  });

  it('names an Inspector export’s server with --server, and says which entry it skipped', async () => {
    const r = await lab([
      'static/traces/logs/inspector-history.json',
      '--server',
      'notes',
      '--out',
      join(dir, 'i.jsonl')
    ]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^notes +2 +4 +1 +2 +1$/m);
    expect(r.out).toContain('static/traces/logs/inspector-history.json: entry [8]: origin must be');
  });

  it.each([
    [['--out', 'x.jsonl'], 'lab: import: give at least one log file'],
    [['static/traces/logs/mcp.log'], 'lab: import: --out TRACE.jsonl is required'],
    [
      ['static/traces/logs/mcp.log', '--format', 'har', '--out', 'x'],
      'lab: import: --format must be auto, claude, inspector, ndjson, audit (got "har")'
    ],
    [
      ['static/traces/logs/mcp.log', '--server', 'x', '--out', 'x'],
      'lab: import: --server: static/traces/logs/mcp.log is in the claude format, which names its servers itself'
    ],
    [['static/traces', '--out', 'x'], /^lab: static\/traces: the log is a directory, not a file/],
    [['missing.log', '--out', 'x'], 'lab: missing.log: cannot read the log (ENOENT)'],
    [
      ['README.md', '--out', 'x'],
      /^lab: import: README\.md: cannot tell the format from its first 50 lines/
    ]
  ])('%j: one line, exit 2', async (args, error) => {
    const r = await lab(args);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err.trimEnd().split('\n')).toHaveLength(1);
    expect(r.err.trimEnd()).toMatch(error);
  });

  it('streams a large log: every noise line counted, only the first reasons kept', () => {
    const file = join(dir, 'big.ndjson');
    const noise = 'Server running on stdio, waiting for a message\n'.repeat(200_000);
    const sampling = (id: number) =>
      `[big] < {"jsonrpc":"2.0","id":${id},"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":5}}\n`;
    writeFileSync(file, sampling(1) + noise + sampling(2));
    const progress: string[] = [];
    const r = importFiles({
      files: [file],
      format: 'auto',
      out: join(dir, 'big.jsonl'),
      progress: (s) => void progress.push(s)
    });
    expect(r.report.sampling).toBe(2);
    expect(r.report.skipped).toBe(200_000);
    expect(r.report.skips).toHaveLength(MAX_SKIPS_KEPT);
    // About 9 MB: a progress line for each MB read.
    expect(progress.length).toBeGreaterThanOrEqual(8);
    expect(progress.at(-1)).toMatch(/big\.ndjson: [\d,]+ lines$/);
  });
});

describe('lab replay of an imported trace', () => {
  it('prints the what-if report and writes whatif.json and whatif.csv', async () => {
    const trace = join(dir, 'stdio.jsonl');
    // `lab` itself, once: the command is wired into main.ts.
    const imp = spawnSync(
      'npx',
      [
        'tsx',
        'src/cli/main.ts',
        'import',
        'static/traces/logs/stdio-capture.ndjson',
        '--out',
        trace
      ],
      { encoding: 'utf8' }
    );
    expect(imp.stderr).toBe('');
    expect(imp.status).toBe(0);
    const out = join(dir, 'replay');
    const text: string[] = [];
    const code = await runCommand(
      commands.replay!,
      [trace, '--scenario', 'static/scenarios/reconnect-bypass.json', '--out', out],
      {
        out: (s) => void text.push(s),
        err: (s) => void text.push(s),
        stdin: () => Promise.reject(new Error('no stdin'))
      }
    );
    expect(code).toBe(0);
    expect(text.join('')).toContain('what the policy would have done');
    expect(text.join('')).toMatch(/^ {2}sampling requests +4$/m);
    const report = JSON.parse(readFileSync(join(out, 'whatif.json'), 'utf8'));
    expect(report.total.then).toEqual({ served: 1, refused: 2, none: 1 });
    expect(readFileSync(join(out, 'whatif.csv'), 'utf8').split('\r\n')[0]).toMatch(/^lane,server,/);
  }, 120_000);
});
