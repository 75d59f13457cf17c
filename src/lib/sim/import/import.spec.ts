/**
 * Each shipped example log (static/traces/logs/) imported as `lab import` and the page read it:
 * the counts below were made by reading the files by hand (the comments say which lines).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseTrace } from '../input/trace';
import { detectFormat, importTexts, TrafficImport, type ImportResult } from './index';

const DIR = 'static/traces/logs';
const read = (f: string) => readFileSync(`${DIR}/${f}`, 'utf8');

function ok(r: ImportResult) {
  if (!r.ok) throw new Error(r.error);
  return r;
}

/** The trace as `lab import` writes it, read back by the trace parser: valid, same events. */
function roundTrips(r: ReturnType<typeof ok>): void {
  const text = r.events.map((e) => JSON.stringify(e)).join('\n');
  const back = parseTrace(text);
  expect(back.ok ? null : back.error).toBeNull();
  if (back.ok) expect(back.events).toEqual(r.events);
}

const skipped = (r: ReturnType<typeof ok>) => r.report.skips.map((s) => s.entry ?? s.line);
const kinds = (r: ReturnType<typeof ok>) =>
  r.events.map((e) => (e.type === 'request' ? `request:${e.logged?.response}` : e.type));

describe('Claude Desktop mcp-server-<name>.log (CRLF, a restart, a truncated last line)', () => {
  const text = read('mcp-server-weather.log');

  it('is CRLF and ends in a cut-off line', () => {
    expect(text.split('\r\n')).toHaveLength(29);
    expect(text.endsWith('\n')).toBe(false);
  });

  it('counts what a person counts', () => {
    const r = ok(importTexts([['mcp-server-weather.log', text]]));
    expect(r.report.files).toEqual([
      { file: 'mcp-server-weather.log', format: 'claude', lines: 29 }
    ]);
    // Lines 2 and 23 start connections; 1, 19–22 are lifecycle lines too.
    expect(r.report.connections).toBe(2);
    expect(r.report.inferredConnections).toBe(0);
    expect(r.report.lifecycle).toBe(7);
    // Sampling requests on lines 7, 12, 14, 16, 18, 27; answered on 8 (result), 13, 15, 17, 28
    // (-32000); line 18's request is cut by the restart (its answer, line 26, comes on the new
    // connection and answers nothing there).
    expect(r.report.sampling).toBe(6);
    expect(r.report.responses).toEqual({ result: 1, error: 4, none: 1 });
    expect(r.report.errorCodes).toEqual({ '-32000': 4 });
    expect(r.report.messages).toBe(19);
    expect(r.report.skipped).toBe(3);
    expect(skipped(r)).toEqual([10, 26, 29]);
    expect(r.report.skips.map((s) => s.why)).toEqual([
      expect.stringMatching(/^an error line, not a message: "Unexpected token/),
      'a response to id 4 that no request on this connection (weather #2) is waiting for',
      'the message is cut off (its JSON object never closes)'
    ]);
    expect(kinds(r)).toEqual([
      'connect',
      'request:result',
      'request:error',
      'request:error',
      'request:error',
      'request:none',
      'disconnect',
      'connect',
      'request:error'
    ]);
    // Times from the first event (line 2, 13:44:16.395), answers by how long they took.
    expect(r.events[1]).toMatchObject({ t: 3_905, logged: { afterMs: 2_600 } });
    expect(r.events.at(-1)).toMatchObject({
      t: 68_605,
      logged: { response: 'error', error: { code: -32000 } }
    });
    expect(r.report.spanMs).toBe(68_605);
    roundTrips(r);
  });
});

describe('Claude Desktop mcp.log (level first, two servers interleaved)', () => {
  it('counts what a person counts', () => {
    const r = ok(importTexts([['mcp.log', read('mcp.log')]]));
    expect(r.report.servers.map((s) => [s.name, s.connections, s.sampling, s.responses])).toEqual([
      ['memory', 1, 1, { result: 1, error: 0, none: 0 }],
      ['research', 1, 3, { result: 2, error: 1, none: 0 }]
    ]);
    expect(r.report.messages).toBe(13);
    expect(r.report.lifecycle).toBe(5);
    // Line 9 names no server; line 20 is a warning.
    expect(skipped(r)).toEqual([9, 20]);
    expect(r.report.errorCodes).toEqual({ '-32603': 1 });
    roundTrips(r);
  });

  it('reads a server from the first file that names it (mcp.log repeats the per-server logs)', () => {
    const log = read('mcp.log');
    const memory = log
      .split('\n')
      .filter((l) => l.includes('[memory]'))
      .map((l) => l.replace(/\[info\] \[memory\]/, '[memory] [info]'))
      .join('\n');
    const r = ok(
      importTexts([
        ['mcp-server-memory.log', memory],
        ['mcp.log', log]
      ])
    );
    expect(r.report.sampling).toBe(4);
    // The 8 memory lines of mcp.log (1, 3, 5, 7, 11, 12, 16, 17), and lines 9 and 20.
    expect(r.report.skipped).toBe(10);
    expect(r.report.skips.find((s) => s.file === 'mcp.log' && s.line === 1)?.why).toBe(
      `server "memory" was read from mcp-server-memory.log already`
    );
  });
});

describe('MCP Inspector history export', () => {
  it('counts what a person counts', () => {
    const r = ok(
      importTexts([['inspector-history.json', read('inspector-history.json')]], {
        server: 'notes'
      })
    );
    expect(r.report.files[0]!.format).toBe('inspector');
    expect(r.report.servers.map((s) => s.name)).toEqual(['notes']);
    // Entries 0 and 6 initialize (the second: a reconnect the export does not mark).
    expect(r.report.connections).toBe(2);
    expect(r.report.inferredConnections).toBe(2);
    // Entries 3 (result), 4 (-32000), 5 (clientError: -32603), 7 (no response).
    expect(r.report.sampling).toBe(4);
    expect(r.report.responses).toEqual({ result: 1, error: 2, none: 1 });
    expect(r.report.errorCodes).toEqual({ '-32000': 1, '-32603': 1 });
    expect(r.report.messages).toBe(14);
    // Entry 8's origin is "browser"; entry 9's sampling request has no maxTokens.
    expect(skipped(r)).toEqual([8, 9]);
    expect(r.report.skips[1]!.why).toMatch(/maxTokens: missing required member/);
    roundTrips(r);
  });

  it('names the server after the file when --server is not given', () => {
    const r = ok(importTexts([['exports/inspector-history.json', read('inspector-history.json')]]));
    expect(r.report.servers.map((s) => s.name)).toEqual(['inspector-history']);
  });

  it('refuses an export that is not one JSON array, in one line', () => {
    const r = importTexts([['x.json', '[{"id": 1},\n']]);
    expect(r).toEqual({
      ok: false,
      error: expect.stringMatching(/^x\.json: an Inspector export must be one JSON array: /)
    });
  });
});

describe('raw stdio capture (NDJSON, prefixed, two servers interleaved)', () => {
  it('counts what a person counts', () => {
    const r = ok(importTexts([['stdio-capture.ndjson', read('stdio-capture.ndjson')]]));
    expect(r.report.servers.map((s) => [s.name, s.connections, s.sampling, s.responses])).toEqual([
      ['git', 1, 2, { result: 1, error: 0, none: 1 }],
      ['docs', 2, 2, { result: 0, error: 2, none: 0 }]
    ]);
    expect(r.report.inferredConnections).toBe(3);
    expect(r.report.messages).toBe(13);
    // 5: stderr; 14: an answer to nothing; 16: cut off.
    expect(skipped(r)).toEqual([5, 14, 16]);
    roundTrips(r);
  });

  it('takes the server from --server, directions from the message, and no times as one instant', () => {
    const lines = [
      '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}',
      '{"jsonrpc":"2.0","id":0,"result":{}}',
      '{"jsonrpc":"2.0","id":0,"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":5}}',
      '{"jsonrpc":"2.0","id":0,"result":{"role":"assistant","content":{"type":"text","text":"hello"},"model":"m"}}'
    ];
    const r = ok(importTexts([['cap.jsonl', lines.join('\n')]], { server: 'echo' }));
    expect(r.events.map((e) => [e.t, e.server, e.type, e.logged?.response])).toEqual([
      [0, 'echo', 'connect', undefined],
      [0, 'echo', 'request', 'result']
    ]);
    expect(r.report.start).toBeNull();
  });
});

describe('format detection and bad input', () => {
  it.each([
    ['2025-07-20T13:44:16.395Z [weather] [info] Message from client: {}', 'claude'],
    ['2025-07-20T13:44:16.395Z [info] [memory] Initializing server...', 'claude'],
    ['[', 'inspector'],
    ['[{"id": 1,', 'inspector'],
    ['[git] > {"jsonrpc":"2.0"}', 'ndjson'],
    ['{"jsonrpc":"2.0","id":1,"method":"ping"}', 'ndjson'],
    ['Server running on stdio', null]
  ])('%s → %s', (line, format) => {
    expect(detectFormat(line)).toBe(format);
  });

  it('--server is refused for a format that names its servers', () => {
    const imp = new TrafficImport({ server: 'x' });
    imp.begin('mcp.log');
    imp.line(read('mcp.log').split('\n')[0]!, 1);
    expect(imp.error).toBe(
      '--server: mcp.log is in the claude format, which names its servers itself'
    );
  });

  it('a file with no format in its first 50 lines is refused', () => {
    const r = importTexts([['notes.txt', 'hello\n'.repeat(60)]]);
    expect(r).toEqual({
      ok: false,
      error:
        'notes.txt: cannot tell the format from its first 50 lines: not a Claude Desktop log, an Inspector export, a JSON-RPC capture or an audit log (lab import --format names it)'
    });
  });

  it('a log with no traffic is refused', () => {
    const r = importTexts([['x.ndjson', '[a] {"jsonrpc": 1}\n']]);
    expect(r.ok).toBe(false);
  });
});

describe('the lab’s audit JSONL (written by the handler; the process killed mid-record)', () => {
  it('counts what a person counts', () => {
    const text = read('handler-audit.jsonl');
    const r = ok(importTexts([['handler-audit.jsonl', text]]));
    expect(r.report.files).toEqual([{ file: 'handler-audit.jsonl', format: 'audit', lines: 16 }]);
    // mail#1, mail#2, research#3, notes#4, reports#5: one connection each.
    expect(r.report.servers.map((s) => [s.name, s.connections, s.sampling, s.responses])).toEqual([
      ['mail', 2, 6, { result: 3, error: 3, none: 0 }],
      ['research', 1, 5, { result: 0, error: 5, none: 0 }],
      ['notes', 1, 2, { result: 0, error: 2, none: 0 }],
      ['reports', 1, 2, { result: 2, error: 0, none: 0 }]
    ]);
    expect(r.report.skips).toEqual([
      {
        file: 'handler-audit.jsonl',
        line: 16,
        why: expect.stringMatching(/^not valid JSON \(.*\): cut off\?$/)
      }
    ]);
    // One text per identity: the two identical research requests share params, so one identity.
    const research = r.events.filter((e) => e.server === 'research' && e.type === 'request');
    expect(new Set(research.map((e) => JSON.stringify(e.params))).size).toBe(1);
    expect(research[0]!.logged).toMatchObject({
      response: 'error',
      error: { code: -32003, message: 'policy.sampling_disabled' },
      audit: { outcome: 'denied', reason: 'policy.sampling_disabled' }
    });
    roundTrips(r);
  });

  it('a shadow-mode record was served, whatever its verdict', () => {
    const line = read('handler-audit.jsonl').split('\n')[3]!;
    const shadow = JSON.stringify({
      ...JSON.parse(line),
      shadow: { outcome: 'denied', reason: 'policy.rate_limit' }
    });
    const r = ok(importTexts([['shadow.jsonl', shadow]]));
    expect(r.events[1]!.logged).toMatchObject({
      response: 'result',
      audit: { outcome: 'denied', reason: 'policy.rate_limit', shadow: true }
    });
  });
});

describe('a run’s audit.jsonl (both lanes)', () => {
  it('reads the first lane’s records and skips the other’s', () => {
    const lines = read('handler-audit.jsonl').split('\n').slice(0, 3);
    const both = lines.flatMap((l) => {
      const r = JSON.parse(l);
      return [JSON.stringify({ ...r, lane: 'A' }), JSON.stringify({ ...r, lane: 'B' })];
    });
    const r = ok(importTexts([['audit.jsonl', both.join('\n')]]));
    expect(r.report.sampling).toBe(3);
    expect(skipped(r)).toEqual([2, 4, 6]);
    expect(r.report.skips[0]!.why).toBe(
      "a record of lane B: only lane A's are read (the same traffic, decided again)"
    );
  });
});
