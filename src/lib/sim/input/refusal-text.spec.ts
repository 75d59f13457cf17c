/**
 * What a refusal echoes of its input (issue #19, item 7): a value with invisible characters in it
 * (a byte order mark, NUL, a right-to-left override, a zero-width space, a line separator) is
 * quoted with those as `\u` escapes, and a huge one as a short excerpt with its length — in every
 * parser the page and `lab` share, and in `lab`'s own option errors.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commands, runCommand } from '../../../cli/commands';
import { hasInvisible } from '../../machine/excerpt';
import { parsePolicy } from '../../machine/policy';
import { parseFork } from '../engine/fork';
import { parseLesson } from './lessons';
import { parseScenario } from './scenario';
import { parseTrace } from './trace';
import { decodeScenarioHash } from '../../ui/share';
import type { LaneId } from '../../machine/vocabulary';

/** Invisible or misleading characters, and a visible one so the value is not blank. */
const BAD = 'x\uFEFF\u0000\u202E\u200B\u2028\uD800';
const BIG = 'k'.repeat(1_000_000);

const scenario = JSON.parse(readFileSync('static/scenarios/rfc-budget-caps.json', 'utf8')) as {
  [k: string]: unknown;
  servers: Record<string, unknown>[];
  lanes: Record<LaneId, { policy: { defaults: Record<string, unknown> }; client: object }>;
};
const policy = scenario.lanes.A.policy;
const lesson = JSON.parse(readFileSync('static/lessons/budget-window.json', 'utf8')) as object;
const traceLine = readFileSync('static/traces/reconnect-storm.jsonl', 'utf8').split('\n')[1]!;

function first(r: { ok: boolean; errors?: { path: string; message: string }[] }): string {
  if (r.ok || !r.errors) throw new Error('accepted');
  return `${r.errors[0]!.path}: ${r.errors[0]!.message}`;
}

function edit(f: (s: typeof scenario) => void): unknown {
  const s = structuredClone(scenario);
  f(s);
  return s;
}

/** Each case: a refusal, given the odd value. */
const PARSERS: [string, (v: string) => string][] = [
  ['scenario: an unknown member', (v) => first(parseScenario({ ...scenario, [v]: 1 }))],
  [
    'scenario: a string where a number goes',
    (v) => first(parseScenario({ ...scenario, durationMs: v }))
  ],
  [
    'scenario: an unknown behaviour',
    (v) => first(parseScenario(edit((s) => (s.servers[0]!.behaviour = v))))
  ],
  [
    'scenario: a duplicate server name',
    (v) =>
      first(
        parseScenario(
          edit(
            (s) =>
              (s.servers = [
                { ...s.servers[0], name: v },
                { ...s.servers[0], name: v }
              ])
          )
        )
      )
  ],
  [
    'scenario: an unknown parameter',
    (v) => first(parseScenario(edit((s) => (s.servers[0]!.params = { [v]: 1 }))))
  ],
  [
    'scenario: an unknown reason override',
    (v) => first(parseScenario(edit((s) => (s.lanes.A.client = { reasons: { [v]: {} } }))))
  ],
  [
    'scenario: a policy value outside its enum',
    (v) => first(parseScenario(edit((s) => (s.lanes.A.policy.defaults.consent = v))))
  ],
  [
    'scenario: a currency',
    (v) =>
      first(
        parseScenario(
          edit(
            (s) =>
              (s.lanes.A.policy.defaults.budget = { amount: '1', currency: v, windowMs: 60000 })
          )
        )
      )
  ],
  [
    'scenario: an amount',
    (v) =>
      first(
        parseScenario(
          edit(
            (s) =>
              (s.lanes.A.policy.defaults.budget = { amount: v, currency: 'USD', windowMs: 60000 })
          )
        )
      )
  ],
  [
    'scenario: a policy version',
    (v) =>
      first(parseScenario(edit((s) => ((s.lanes.A.policy as Record<string, unknown>).version = v))))
  ],
  ['scenario text: not JSON', (v) => first(parseScenario(`${v.slice(1)}{}`))],
  [
    'scenario text: a duplicate member',
    (v) => first(parseScenario(`{${JSON.stringify(v)}: 1, ${JSON.stringify(v)}: 2}`))
  ],
  [
    'policy text: an unknown member',
    (v) => first(parsePolicy(JSON.stringify({ ...policy, [v]: 1 })))
  ],
  ['policy text: not JSON', (v) => first(parsePolicy(`{"version": 1, ${v.slice(1)}}`))],
  [
    'policy text: an invalid server name',
    (v) => first(parsePolicy(JSON.stringify({ ...policy, servers: { [v]: { sampling: false } } })))
  ],
  [
    'trace: not JSON',
    (v) => {
      const r = parseTrace(`${v.slice(1)}\n`);
      return r.ok ? 'accepted' : r.error;
    }
  ],
  [
    'trace: an unknown event type',
    (v) => {
      const r = parseTrace(JSON.stringify({ ...JSON.parse(traceLine), type: v }));
      return r.ok ? 'accepted' : r.error;
    }
  ],
  [
    'trace: an unknown member',
    (v) => {
      const r = parseTrace(JSON.stringify({ ...JSON.parse(traceLine), [v]: 1 }));
      return r.ok ? 'accepted' : r.error;
    }
  ],
  ['lesson: an unknown placeholder', (v) => first(parseLesson({ ...lesson, explain: `{${v}}` }))],
  [
    'fork: an unknown lane',
    (v) => first(parseFork({ version: 1, atMs: 0, lane: v, change: { kind: 'policy', policy } }))
  ],
  [
    'share link: not a scenario link',
    (v) => {
      const r = decodeScenarioHash(`#q=${v}`);
      return r.ok ? 'accepted' : r.error;
    }
  ],
  [
    'share link: a character a link never holds',
    (v) => {
      const r = decodeScenarioHash(`#s=N4Ig${v}`);
      return r.ok ? 'accepted' : r.error;
    }
  ]
];

describe('refusals quote what they echo: escaped, short', () => {
  it.each(PARSERS)('%s: invisible characters are \\u escapes', (_, refuse) => {
    const message = refuse(BAD);
    expect(message).not.toBe('accepted');
    expect(hasInvisible(message), JSON.stringify(message)).toBe(false);
  });

  it.each(PARSERS)('%s: a 1,000,000-character value is a short excerpt', (_, refuse) => {
    const message = refuse(BIG);
    expect(message).not.toBe('accepted');
    expect(message.length).toBeLessThan(1_000);
  });
});

async function lab(name: string, args: string[], stdin = '') {
  let stderr = '';
  const code = await runCommand(commands[name]!, args, {
    out: () => {},
    err: (s) => void (stderr += s),
    stdin: async () => stdin
  });
  return { code, stderr };
}

describe('lab quotes what it echoes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lab-echo-'));
  const file = join(dir, 'ok.json');
  writeFileSync(file, JSON.stringify(scenario));
  const CASES: [string, (v: string) => Promise<{ code: number; stderr: string }>][] = [
    ['an unknown option', (v) => lab('run', [file, `--${v}`])],
    ['--seed', (v) => lab('run', [file, '--seed', v])],
    ['--restart-at', (v) => lab('run', [file, '--restart-at', v])],
    ['--break', (v) => lab('run', [file, '--break', v])],
    ['a file that is not there', (v) => lab('run', [join(dir, v)])],
    ['identity: standard input not JSON', (v) => lab('identity', ['--server', 'x'], v.slice(1))],
    [
      'run: a scenario file that is not JSON',
      (v) => {
        const f = join(dir, 'bad.json');
        writeFileSync(f, `{${v.slice(1)}`);
        return lab('run', [f]);
      }
    ]
  ];
  it.each(CASES)('%s: exit 2, one line, escaped and short', async (_, run) => {
    for (const v of [BAD, BIG]) {
      const r = await run(v);
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(hasInvisible(r.stderr.trim()), JSON.stringify(r.stderr.slice(0, 200))).toBe(false);
      expect(r.stderr.length).toBeLessThan(1_000);
    }
  });
});
