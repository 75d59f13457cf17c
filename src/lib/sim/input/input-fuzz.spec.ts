/**
 * Bad input, fuzzed (issue #8). The ready-made scenarios, the example trace and policies are
 * mutated — types flipped, members deleted, huge and negative numbers, `__proto__` and
 * `constructor` members, lone surrogates — and hostile inputs are added by hand (10 MB strings,
 * 10,000-deep nesting, binary garbage, unsorted and duplicate times, 200,001 events). Each goes
 * to the parsers, and a sample to the `lab` commands in-process: each must be accepted and run,
 * or refused with exit 2 and one line naming where and what — never a stack trace, a crash, or
 * a message a person cannot act on. The counts are printed at the end.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import lzString from 'lz-string';
import { afterAll, describe, expect, it } from 'vitest';
import { commands, runCommand } from '../../../cli/commands';
import { DEFAULT_POLICY, parsePolicy } from '../../machine/policy';
import { decodeScenarioHash, HASH_PREFIX } from '../../ui/share';
import { Simulation } from '../engine/engine';
import {
  checkEdge,
  EDGE_BASE,
  EDGE_LITERALS,
  numericPaths,
  withLiteral,
  type EdgePath
} from './input-edges.testing';
import { parseScenario } from './scenario';
import { parseTrace } from './trace';

const ROOT = fileURLToPath(new URL('../../../../static/', import.meta.url));
const SCENARIOS = readdirSync(join(ROOT, 'scenarios'))
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => ({ name: f, data: JSON.parse(readFileSync(join(ROOT, 'scenarios', f), 'utf8')) }));
const TRACE = readFileSync(join(ROOT, 'traces', 'reconnect-storm.jsonl'), 'utf8');
const POLICIES = [
  DEFAULT_POLICY,
  ...SCENARIOS.flatMap((s) => [s.data.lanes.A.policy, s.data.lanes.B.policy])
] as unknown[];
/** Short runs, so accepted mutants can be run to the end within the suite's budget. */
const RUNNABLE = SCENARIOS.filter((s) =>
  ['rfc-budget-caps.json', 'transient-marked-permanent.json'].includes(s.name)
);

const tally = { tried: 0, accepted: 0, refused: 0 };
afterAll(() => {
  console.log(
    `input fuzz: ${tally.tried} inputs tried, ${tally.accepted} accepted, ${tally.refused} refused`
  );
});

/** A refusal a person can act on: one line, a place, a plain message, no stack or zod jargon. */
function expectPlainLine(line: string): void {
  expect(line).not.toContain('\n');
  expect(line.length).toBeGreaterThan(0);
  expect(line).not.toMatch(/Invalid input|received undefined|expected string, received/);
  expect(line).not.toMatch(/\n\s+at |\bat [\w.<>]+ \(/);
}

type Path = (string | number)[];

function allPaths(v: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  out.push(prefix);
  if (Array.isArray(v)) v.forEach((x, i) => allPaths(x, [...prefix, i], out));
  else if (v && typeof v === 'object')
    for (const k of Object.keys(v))
      allPaths((v as Record<string, unknown>)[k], [...prefix, k], out);
  return out;
}

const OPS = [
  'delete',
  'string',
  'huge',
  'max-safe',
  'negative',
  'fraction',
  'zero',
  'bool',
  'null',
  'array',
  'object',
  '__proto__',
  'constructor',
  'lone-surrogate',
  'empty'
] as const;
type Op = (typeof OPS)[number];

function replacement(op: Op, old: unknown): unknown {
  switch (op) {
    case 'string':
      return typeof old === 'string' ? 42 : String(old);
    case 'huge':
      return 1e308;
    case 'max-safe':
      return 9_000_000_000_000_000;
    case 'negative':
      return -1_000_000;
    case 'fraction':
      return 0.001;
    case 'zero':
      return 0;
    case 'bool':
      return true;
    case 'null':
      return null;
    case 'array':
      return [old];
    case 'object':
      return { value: old };
    case 'lone-surrogate':
      return 'a\ud800b';
    case 'empty':
      return typeof old === 'string' ? '' : Array.isArray(old) ? [] : {};
    default:
      return old;
  }
}

/** A mutated deep copy: one operation at one path (the path picked by `pick` among all). */
function mutate(v: unknown, pick: number, op: Op): unknown {
  const copy = structuredClone(v);
  const paths = allPaths(copy);
  const path = paths[pick % paths.length]!;
  if (path.length === 0 && (op === '__proto__' || op === 'constructor' || op === 'delete'))
    return copy;
  const parent = path
    .slice(0, -1)
    .reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], copy) as
    Record<string, unknown> | unknown[];
  const key = path[path.length - 1]!;
  const target = path.length === 0 ? copy : (parent as Record<string | number, unknown>)[key];
  if (op === '__proto__' || op === 'constructor') {
    const into = target && typeof target === 'object' && !Array.isArray(target) ? target : parent;
    if (into && typeof into === 'object' && !Array.isArray(into))
      // Defined, not assigned: an own member named `__proto__`, as JSON.parse makes it.
      Object.defineProperty(into, op, {
        value: { sampling: false },
        enumerable: true,
        writable: true,
        configurable: true
      });
    return copy;
  }
  if (path.length === 0) return replacement(op, copy);
  if (op === 'delete') {
    if (Array.isArray(parent)) parent.splice(key as number, 1);
    else delete parent[key as string];
  } else (parent as Record<string | number, unknown>)[key] = replacement(op, target);
  return copy;
}

const mutation = fc.record({
  which: fc.nat(),
  pick: fc.nat(),
  op: fc.constantFrom(...OPS),
  asText: fc.boolean()
});

describe('mutated inputs to the parsers: accepted, or refused with a place and a plain message', () => {
  it('scenarios', () => {
    fc.assert(
      fc.property(mutation, ({ which, pick, op, asText }) => {
        const m = mutate(SCENARIOS[which % SCENARIOS.length]!.data, pick, op);
        tally.tried++;
        const r = parseScenario(asText ? JSON.stringify(m) : m);
        if (r.ok) tally.accepted++;
        else {
          tally.refused++;
          for (const e of r.errors) {
            expect(e.path).toMatch(/^\$/);
            expectPlainLine(`${e.path}: ${e.message}`);
          }
        }
      }),
      { numRuns: 400, seed: 1208 }
    );
  });

  it('policies', () => {
    fc.assert(
      fc.property(mutation, ({ which, pick, op, asText }) => {
        const m = mutate(POLICIES[which % POLICIES.length], pick, op);
        tally.tried++;
        const r = parsePolicy(asText ? JSON.stringify(m, null, 2) : m);
        if (r.ok) tally.accepted++;
        else {
          tally.refused++;
          for (const e of r.errors) expectPlainLine(`${e.path}: ${e.message}`);
        }
      }),
      { numRuns: 400, seed: 1208 }
    );
  });

  it('traces: mutated lines, shuffled and duplicated events', () => {
    const lines = TRACE.trim().split('\n');
    fc.assert(
      fc.property(
        mutation,
        fc.nat({ max: lines.length - 1 }),
        fc.constantFrom('mutate', 'shuffle', 'duplicate'),
        ({ pick, op }, line, how) => {
          let out = [...lines];
          if (how === 'mutate')
            out[line] = JSON.stringify(mutate(JSON.parse(out[line]!), pick, op));
          else if (how === 'duplicate') out.splice(line, 0, out[line]!, out[line]!);
          else out = out.map((l, i) => out[(i * 7 + line) % out.length]!);
          tally.tried++;
          const r = parseTrace(out.join('\n'));
          if (r.ok) {
            tally.accepted++;
            // Stable order by time, whatever order the file had.
            for (let i = 1; i < r.events.length; i++)
              expect(r.events[i]!.t).toBeGreaterThanOrEqual(r.events[i - 1]!.t);
          } else {
            tally.refused++;
            expect(r.error).toMatch(/^line \d+: \$|^the trace|^this run/);
            expectPlainLine(r.error);
          }
        }
      ),
      { numRuns: 300, seed: 1208 }
    );
  });
});

describe('hostile inputs by hand', () => {
  const tenMb = 'x'.repeat(10_000_000);
  const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
  const base = SCENARIOS[0]!.data;

  it.each([
    [
      'a 10 MB title',
      () => ({ ...base, title: tenMb }),
      '$.title: must be at most 200 characters long'
    ],
    [
      'a 10 MB prompt',
      () => ({
        ...base,
        servers: [{ ...base.servers[0], request: { ...base.servers[0].request, prompt: tenMb } }]
      }),
      '$.servers[0].request.prompt: must be at most 4000000 characters long'
    ],
    [
      'a 10,000-deep value',
      () => JSON.parse(JSON.stringify(base).replace('"seed":', `"deep":${deep(10_000)},"seed":`)),
      '$.deep[0][0][0][0][0]…: nested deeper than 64 levels (the limit for any input)'
    ]
  ])('scenario: %s', (_label, make, expected) => {
    tally.tried++;
    tally.refused++;
    const r = parseScenario(make());
    expect(r.ok ? 'accepted' : `${r.errors[0]!.path}: ${r.errors[0]!.message}`).toBe(expected);
  });

  it('policy text nested 10,000 deep, and binary garbage', () => {
    tally.tried += 2;
    tally.refused += 2;
    const p = parsePolicy(`{"version":1,"defaults":${deep(10_000)}}`);
    expect(p.ok ? '' : p.errors[0]!.message).toMatch(/nested deeper than 256 levels/);
    const bytes = Uint8Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256);
    const g = parsePolicy(new TextDecoder('latin1').decode(bytes));
    expect(g.ok).toBe(false);
    if (!g.ok) expectPlainLine(g.errors[0]!.message);
  });

  it('traces: garbage, lone surrogates, a 10 MB prompt, 200,001 events', () => {
    const bytes = Uint8Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256);
    const garbage = parseTrace(new TextDecoder('latin1').decode(bytes));
    expect(garbage.ok ? '' : garbage.error).toMatch(/^line 1: not valid JSON/);
    const surrogate = parseTrace(
      `{"t":0,"server":"a\\ud800","type":"request","params":{"messages":[{"role":"user","content":{"type":"text","text":"\\udfff"}}],"maxTokens":5}}`
    );
    // A lone surrogate in the params is refused with its path (issue #18: hashed as U+FFFD it
    // would share an identity with "\ufffd"); one in a server name is only a name.
    expect(surrogate.ok ? '' : surrogate.error).toMatch(
      /^line 1: \$\.params\.messages\[0\]\.content\.text: contains a lone surrogate/
    );
    const big = parseTrace(
      `{"t":0,"server":"a","type":"request","params":{"messages":[{"role":"user","content":{"type":"text","text":"${tenMb}"}}],"maxTokens":5}}`
    );
    expect(big.ok).toBe(true);
    const many = Array.from(
      { length: 200_001 },
      (_, i) => `{"t":${i},"server":"s","type":"connect"}`
    );
    const tooMany = parseTrace(many.join('\n'));
    expect(tooMany.ok ? '' : tooMany.error).toBe(
      'line 200001: a trace may hold at most 200000 events'
    );
    tally.tried += 4;
    tally.accepted += 1;
    tally.refused += 3;
  });
});

describe("inputs at the limits' edges (issue #19): run within the estimate, or refused at their path", () => {
  const paths = numericPaths(EDGE_BASE);
  const edge = fc.record({ at: fc.nat(), literal: fc.constantFrom(...EDGE_LITERALS) });
  const viaLink = (text: string) =>
    decodeScenarioHash(HASH_PREFIX + lzString.compressToEncodedURIComponent(text));
  const check = (path: EdgePath, literal: string) =>
    checkEdge(path, literal, tally, expectPlainLine, viaLink);

  it('any number: as files and as share links', () => {
    fc.assert(
      fc.property(edge, ({ at, literal }) => check(paths[at % paths.length]!, literal)),
      { numRuns: 150, seed: 1919 }
    );
  }, 120_000);

  // Before, a tight loop at 10 ms sent 11,000 requests here against an estimate of 606.
  it('every behaviour parameter at every edge', () => {
    const params = EDGE_BASE.servers.flatMap((g, i) =>
      Object.keys(g.params).map((k): EdgePath => ['servers', i, 'params', k])
    );
    const sharp = ['0', '10', '1000000', '1000001', '1e400', '-1e400', 'null', '"NaN"'];
    for (const path of params) for (const literal of sharp) check(path, literal);
  }, 120_000);

  it('through lab run: exit 0, or exit 2 with the path in one line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lab-edges-'));
    await fc.assert(
      fc.asyncProperty(edge, async ({ at, literal }) => {
        const path = paths[at % paths.length]!;
        const file = join(dir, `e${at}.json`);
        writeFileSync(file, withLiteral(EDGE_BASE, path, literal));
        tally.tried++;
        const r = await lab('run', [file]);
        if (r.code === 0) {
          tally.accepted++;
          expect(r.stdout).toMatch(/^requests\s+\d+\s+\d+$/m);
        } else {
          tally.refused++;
          expect(r.code).toBe(2);
          expect(r.stderr).toMatch(/: \$[^ ]*: /);
          expectPlainLine(r.stderr.replace(/\n$/, ''));
        }
      }),
      { numRuns: 20, seed: 1919 }
    );
  });
});

/** A command run in-process, as `main` would run it. */
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

describe('mutated inputs to the lab commands (in-process)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lab-fuzz-'));

  it('lab run: accepted mutants run to the end (every request answered), refused ones exit 2 in one line', async () => {
    await fc.assert(
      fc.asyncProperty(mutation, async ({ which, pick, op }) => {
        const m = mutate(RUNNABLE[which % RUNNABLE.length]!.data, pick, op);
        const file = join(dir, `s${which}-${pick}.json`);
        writeFileSync(file, JSON.stringify(m));
        tally.tried++;
        const r = await lab('run', [file]);
        if (r.code === 0) {
          tally.accepted++;
          expect(r.stderr).toBe('');
          expect(r.stdout).toMatch(/^requests\s+\d+\s+\d+$/m);
          // Every request the servers sent got its frame or a recorded silence.
          const p = parseScenario(m);
          if (!p.ok) throw new Error('accepted by lab run but not by parseScenario');
          const sim = new Simulation(p.scenario);
          sim.runToEnd();
          for (const lane of ['A', 'B'] as const) {
            const c = sim.lanes[lane].metrics.counters;
            const frames = Object.values(c.frames).reduce((a, b) => a + b, 0);
            expect(frames + c.silenced).toBe(c.requests);
          }
        } else {
          tally.refused++;
          expect(r.code).toBe(2);
          expect(r.stdout).toBe('');
          expectPlainLine(r.stderr.replace(/\n$/, ''));
        }
      }),
      { numRuns: 25, seed: 1208 }
    );
  });

  it('lab replay and lab identity on mutated trace lines', async () => {
    const scenario = join(dir, 'replay.json');
    writeFileSync(scenario, JSON.stringify(RUNNABLE[0]!.data));
    const lines = TRACE.trim().split('\n');
    const requests = lines.filter((l) => l.includes('"request"'));
    await fc.assert(
      fc.asyncProperty(mutation, async ({ which, pick, op }) => {
        const line = requests[which % requests.length]!;
        const event = mutate(JSON.parse(line), pick, op);
        const params =
          event && typeof event === 'object' && 'params' in event ? event.params : event;
        const file = join(dir, `t${which}-${pick}.jsonl`);
        writeFileSync(file, [...lines.slice(0, 10), JSON.stringify(event)].join('\n'));
        tally.tried += 2;
        const r = await lab('replay', [file, '--scenario', scenario]);
        if (r.code === 0) tally.accepted++;
        else {
          tally.refused++;
          expect(r.code).toBe(2);
          expectPlainLine(r.stderr.replace(/\n$/, ''));
        }
        const id = await lab('identity', ['--server', 'fuzz'], JSON.stringify(params) ?? '');
        if (id.code === 0) {
          tally.accepted++;
          expect(id.stdout).toMatch(/^fuzz:[0-9a-f]{32}\n$/);
        } else {
          tally.refused++;
          expect(id.code).toBe(2);
          expectPlainLine(id.stderr.replace(/\n$/, ''));
        }
      }),
      { numRuns: 25, seed: 1208 }
    );
  });
});

describe('the real lab process, a small sample', () => {
  it('binary garbage as a scenario and 10,000-deep params: exit 2, one line, no stack', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lab-fuzz-spawn-'));
    const file = join(dir, 'garbage.json');
    writeFileSync(file, Buffer.from(Array.from({ length: 2048 }, (_, i) => (i * 7919 + 13) % 256)));
    const deepParams = `{"messages":[],"metadata":${'['.repeat(10_000)}${']'.repeat(10_000)}}`;
    for (const [args, input, expected] of [
      [
        ['run', file],
        '',
        /^lab: .*garbage\.json: the scenario cannot be read: it is not UTF-8 text: the bytes at offset \d+ \(line \d+\)/
      ],
      [
        ['identity', '--server', 'x'],
        deepParams,
        /^lab: identity: \$\.metadata\[0\]\[0\]\[0\]\[0\]\[0\]…: nested deeper than 64 levels/
      ]
    ] as const) {
      tally.tried++;
      tally.refused++;
      const r = spawnSync('npx', ['tsx', 'src/cli/main.ts', ...args], { input, encoding: 'utf8' });
      expect(r.status).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(expected);
      expectPlainLine(r.stderr.replace(/\n$/, ''));
    }
  });
});
