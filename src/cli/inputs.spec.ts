/**
 * What `lab` reads, bounded, decoded and checked the same way every time (issue #19, items 5–7):
 * a device, a FIFO, a 3 GB file or a line without end is refused in one line before it is read;
 * `--out` never hangs; one encoding rule; a member name given twice is refused with its path;
 * `--seed` takes only a plain decimal integer.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { ftruncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commands, runCommand } from './commands';
import { parseSeed } from './io';

const dir = mkdtempSync(join(tmpdir(), 'lab-inputs-'));
const SCENARIO = 'static/scenarios/rfc-budget-caps.json';
const scenarioText = readFileSync(SCENARIO, 'utf8');
const TRACE = 'static/traces/reconnect-storm.jsonl';
const TRACE_SCENARIO = 'static/scenarios/reconnect-bypass.json';

function file(name: string, content: string | Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

async function lab(name: string, args: string[], stdin = '') {
  let stdout = '';
  let stderr = '';
  const code = await runCommand(commands[name]!, args, {
    out: (s) => void (stdout += s),
    err: (s) => void (stderr += s),
    stdin: async () => stdin
  });
  return { code, stdout, stderr };
}

/**
 * The real process, with a deadline: what hung or grew past 4 GB before is killed, and fails.
 * The deadline and the tests' own are generous: each start of `tsx` takes seconds on a busy CI.
 */
function labProcess(args: string[]) {
  // node itself, not npx: a deadline kills the process that hangs, not only its launcher.
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    encoding: 'utf8',
    timeout: 60_000,
    killSignal: 'SIGKILL'
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function refusedInOneLine(r: { code: number | null; stdout: string; stderr: string }) {
  expect(r.code).toBe(2);
  expect(r.stdout).toBe('');
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
}

describe('lab refuses what it should not read, before reading it', () => {
  it('a character device, as the trace or as the scenario (the real process: /dev/zero)', () => {
    let r = labProcess(['replay', '/dev/zero', '--scenario', TRACE_SCENARIO]);
    refusedInOneLine(r);
    expect(r.stderr).toBe(
      'lab: /dev/zero: the trace is a character device, not a file: give a file, or - to read standard input\n'
    );
    r = labProcess(['replay', TRACE, '--scenario', '/dev/zero']);
    refusedInOneLine(r);
    expect(r.stderr).toContain('/dev/zero: the scenario is a character device, not a file');
  }, 150_000);

  it('a FIFO with no writer, and a FIFO where a run writes a file (the real process)', () => {
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    let r = labProcess(['replay', fifo, '--scenario', TRACE_SCENARIO]);
    refusedInOneLine(r);
    expect(r.stderr).toContain('fifo: the trace is a FIFO (named pipe), not a file');
    const out = join(dir, 'out-fifo');
    mkdirSync(out);
    execFileSync('mkfifo', [join(out, 'frames.jsonl')]);
    r = labProcess(['run', SCENARIO, '--out', out]);
    refusedInOneLine(r);
    expect(r.stderr).toContain('frames.jsonl: is a FIFO (named pipe): a run writes a regular file');
  }, 150_000);

  it('--out under /proc, where a recursive mkdir never returns (the real process)', () => {
    const r = labProcess(['run', SCENARIO, '--out', '/proc/1/x']);
    refusedInOneLine(r);
    expect(r.stderr).toBe(
      'lab: --out /proc/1/x: a run does not write under /proc: give another directory\n'
    );
  }, 150_000);

  it('a 3 GB sparse file, by its size: no byte is read', async () => {
    const big = join(dir, 'sparse.json');
    const fd = openSync(big, 'w');
    ftruncateSync(fd, 3 * 1024 ** 3);
    closeSync(fd);
    let r = await lab('run', [big]);
    refusedInOneLine(r);
    expect(r.stderr).toBe(`lab: ${big}: the scenario is 3 GB; the limit is 5 MB\n`);
    r = await lab('replay', [big, '--scenario', TRACE_SCENARIO]);
    refusedInOneLine(r);
    expect(r.stderr).toBe(`lab: ${big}: the trace is 3 GB; the limit is 64 MB\n`);
  });

  it('a trace line longer than 16 million characters, as soon as it is', async () => {
    const long = file('long.jsonl', Buffer.alloc(16_000_001, 'a'));
    const r = await lab('replay', [long, '--scenario', TRACE_SCENARIO]);
    refusedInOneLine(r);
    expect(r.stderr).toBe(
      `lab: ${long}: line 1: longer than 16,000,000 characters, the limit for one line of a trace\n`
    );
  });

  it('--out that is a file, not a directory', async () => {
    const taken = file('taken', 'x');
    const r = await lab('run', [SCENARIO, '--out', join(taken, 'sub')]);
    refusedInOneLine(r);
    expect(r.stderr).toBe(`lab: --out ${taken}/sub: ${taken} is a file, not a directory\n`);
  });

  it('- reads standard input, explicitly: the same run as from the file', async () => {
    const fromFile = await lab('run', [SCENARIO]);
    const fromStdin = await lab('run', ['-'], scenarioText);
    expect(fromFile.code).toBe(0);
    expect(fromStdin).toEqual(fromFile);
  });
});

describe('one encoding rule', () => {
  const utf16 = (s: string, order: 'le' | 'be') => {
    const le = Buffer.from(s, 'utf16le');
    const body = order === 'le' ? le : Buffer.from(le).swap16();
    return Buffer.concat([Buffer.from(order === 'le' ? [0xff, 0xfe] : [0xfe, 0xff]), body]);
  };

  it('a UTF-8 byte order mark is dropped; UTF-16 with one is decoded: the same run', async () => {
    const plain = await lab('run', [SCENARIO]);
    expect(plain.code).toBe(0);
    for (const [name, bytes] of [
      ['bom.json', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(scenarioText)])],
      ['utf16le.json', utf16(scenarioText, 'le')],
      ['utf16be.json', utf16(scenarioText, 'be')]
    ] as const) {
      expect(await lab('run', [file(name, bytes)]), name).toEqual(plain);
    }
  });

  it('UTF-16 without a byte order mark, UTF-32 and Latin-1 are refused: save it as UTF-8', async () => {
    const cases: [string, Buffer, string][] = [
      [
        'nobom.json',
        Buffer.from(scenarioText, 'utf16le'),
        'the scenario cannot be read: it holds NUL bytes from its start, as UTF-16 or UTF-32 text without a byte order mark does: save it as UTF-8'
      ],
      [
        'utf32.json',
        Buffer.from([0xff, 0xfe, 0, 0, 0x7b, 0, 0, 0]),
        'the scenario cannot be read: it is UTF-32 text: save it as UTF-8'
      ],
      [
        'latin1.json',
        Buffer.from('{\n  "name": "caf\u00e9"\n}', 'latin1'),
        'the scenario cannot be read: it is not UTF-8 text: the bytes at offset 16 (line 2) are not valid UTF-8 (a Latin-1 or Windows-1252 file, or a binary?): save it as UTF-8'
      ]
    ];
    for (const [name, bytes, why] of cases) {
      const path = file(name, bytes);
      const r = await lab('run', [path]);
      refusedInOneLine(r);
      expect(r.stderr).toBe(`lab: ${path}: ${why}\n`);
    }
  });

  it('a trace in UTF-16 with a byte order mark replays as the UTF-8 one', async () => {
    const plain = await lab('replay', [TRACE, '--scenario', TRACE_SCENARIO]);
    expect(plain.code).toBe(0);
    const wide = file('trace16.jsonl', utf16(readFileSync(TRACE, 'utf8'), 'le'));
    expect(await lab('replay', [wide, '--scenario', TRACE_SCENARIO])).toEqual(plain);
  });
});

describe('a member name given twice is refused with its path', () => {
  it('a policy block with "sampling": false, "sampling": true in a scenario', async () => {
    const at = scenarioText.indexOf('"sampling": true');
    expect(at).toBeGreaterThan(0);
    const text = scenarioText.slice(0, at) + '"sampling": false, ' + scenarioText.slice(at);
    const line = text.slice(0, at).split('\n').length;
    const column = at - text.lastIndexOf('\n', at - 1) + '"sampling": false, '.length;
    const path = file('dup.json', text);
    const r = await lab('run', [path]);
    refusedInOneLine(r);
    expect(r.stderr).toBe(
      `lab: ${path}: $.lanes.A.policy.defaults.sampling: duplicate member "sampling" at line ${line}, column ${column}: JSON would silently keep only the last one\n`
    );
  });

  it('a trace line, and the params lab identity reads', async () => {
    const lines = readFileSync(TRACE, 'utf8').split('\n');
    const req = lines.findIndex((l) => l.includes('"maxTokens"'));
    lines[req] = lines[req]!.replace('"maxTokens":', '"maxTokens": 1, "maxTokens":');
    const path = file('dup.jsonl', lines.join('\n'));
    let r = await lab('replay', [path, '--scenario', TRACE_SCENARIO]);
    refusedInOneLine(r);
    expect(r.stderr).toMatch(
      new RegExp(
        `^lab: .*dup\\.jsonl: line ${req + 1}: \\$\\.params\\.maxTokens: duplicate member "maxTokens" at column \\d+: JSON would silently keep only the last one\\n$`
      )
    );
    r = await lab(
      'identity',
      ['--server', 'x'],
      '{"messages": [], "maxTokens": 1, "maxTokens": 2}'
    );
    refusedInOneLine(r);
    expect(r.stderr).toBe(
      'lab: identity: standard input: $.maxTokens: duplicate member "maxTokens" at line 1, column 34: JSON would silently keep only the last one\n'
    );
  });
});

describe('--seed', () => {
  it.each(['', '0x10', '1e3', ' 7', '-1', '07', '4294967296', '1.5'])(
    'refuses %j in one line naming the accepted form, exit 2',
    async (seed) => {
      const r = await lab('run', [SCENARIO, '--seed', seed]);
      refusedInOneLine(r);
      expect(r.stderr).toBe(
        `lab: run: --seed must be a decimal integer from 0 to 4294967295 (such as 42), got ${JSON.stringify(seed)}\n`
      );
    }
  );

  it('takes a plain decimal integer, 0 to 4294967295', () => {
    for (const s of ['0', '42', '4294967295'])
      expect(parseSeed(s)).toEqual({ ok: true, seed: Number(s) });
  });
});
