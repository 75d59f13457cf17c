import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { requestIdentity } from '../lib/machine/identity';
import { commands, runCommand } from './commands';
import type { LaneId } from '../lib/machine/vocabulary';

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

describe('lab run and replay', () => {
  const out = `/tmp/lab-cli-spec-${process.pid}`;

  it('runs a scenario, prints the per-lane summary and writes frames, audit and metrics', () => {
    const r = lab(['run', 'static/scenarios/reconnect-bypass.json', '--out', out]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/consent prompts/);
    expect(r.stdout).toMatch(/abandoned requests/);
    const frames = readFileSync(`${out}/frames.jsonl`, 'utf8').trim().split('\n');
    const first = JSON.parse(frames[0]!);
    expect(Object.keys(first)).toEqual(['t', 'lane', 'server', 'connection', 'direction', 'frame']);
    expect(first.direction).toBe('in');
    expect(first.frame.method).toBe('sampling/createMessage');
    const audit = readFileSync(`${out}/audit.jsonl`, 'utf8').trim().split('\n');
    expect(JSON.parse(audit[0]!).identity).toMatch(/:[0-9a-f]{32}$/);
    const metrics = JSON.parse(readFileSync(`${out}/metrics.json`, 'utf8'));
    expect(metrics.lanes.A.summary.requests).toBeGreaterThan(0);
  });

  it('is byte-identical for the same scenario and seed, and differs for another seed', () => {
    lab(['run', 'static/scenarios/tired-user.json', '--seed', '5', '--out', `${out}-a`]);
    lab(['run', 'static/scenarios/tired-user.json', '--seed', '5', '--out', `${out}-b`]);
    lab(['run', 'static/scenarios/tired-user.json', '--seed', '6', '--out', `${out}-c`]);
    const read = (d: string, f: string) => readFileSync(`${d}/${f}`, 'utf8');
    expect(read(`${out}-a`, 'frames.jsonl')).toBe(read(`${out}-b`, 'frames.jsonl'));
    expect(read(`${out}-a`, 'audit.jsonl')).toBe(read(`${out}-b`, 'audit.jsonl'));
    expect(read(`${out}-a`, 'audit.jsonl')).not.toBe(read(`${out}-c`, 'audit.jsonl'));
    // Three real `lab run` processes: allowed the time a loaded two-core machine needs for them.
  }, 180_000);

  it('replays a trace against a scenario', () => {
    const r = lab([
      'replay',
      'static/traces/reconnect-storm.jsonl',
      '--scenario',
      'static/scenarios/reconnect-bypass.json',
      '--out',
      `${out}-replay`
    ]);
    expect(r.code).toBe(0);
    const lines = readFileSync(`${out}-replay/frames.jsonl`, 'utf8').trim().split('\n');
    expect(lines.filter((l) => l.includes('"direction":"in"'))).toHaveLength(2 * 60);
  });

  it('names the file, the JSON path and the problem of a bad scenario, with exit code 2', () => {
    const bad = `${out}-bad.json`;
    const s = JSON.parse(readFileSync('static/scenarios/reconnect-bypass.json', 'utf8'));
    s.lanes.B.policy.defaults.budget.amount = '5 dollars';
    writeFileSync(bad, JSON.stringify(s));
    const r = lab(['run', bad]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(`${bad}: $.lanes.B.policy.defaults.budget.amount`);
  });

  it('names the line of a bad trace', () => {
    const bad = `${out}-bad.jsonl`;
    writeFileSync(
      bad,
      '{"t":0,"server":"x","type":"connect"}\n{"t":1,"server":"x","type":"request"}\n'
    );
    const r = lab(['replay', bad, '--scenario', 'static/scenarios/reconnect-bypass.json']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/line 2: \$\.params/);
  });

  it('rejects a bad seed and a missing file', () => {
    expect(lab(['run', 'static/scenarios/tired-user.json', '--seed', 'x']).code).toBe(2);
    const r = lab(['run', 'nope.json']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/nope\.json: cannot read the scenario \(ENOENT\)/);
  });
});

/** A command run in-process, its streams captured: what `main` would print and return. */
async function inProcess(name: string, args: string[], stdin = '') {
  let stdout = '';
  let stderr = '';
  const code = await runCommand(commands[name]!, args, {
    out: (s) => void (stdout += s),
    err: (s) => void (stderr += s),
    stdin: async () => stdin
  });
  return { code, stdout, stderr };
}

describe('lab: names are data, work is bounded (issue #12)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lab-sec-'));
  const base = JSON.parse(readFileSync('static/scenarios/retryable-loop.json', 'utf8')) as {
    servers: Record<string, unknown>[];
    lanes: Record<LaneId, { policy: { defaults: Record<string, unknown>; servers: object } }>;
    durationMs: number;
  };

  it.each(['__proto__', 'constructor', 'toString', 'plain'])(
    'lab run: a lane-A block for a server named %j denies all its requests',
    async (name) => {
      const s = structuredClone(base);
      s.servers = [{ ...s.servers[0], name }];
      for (const l of ['A', 'B'] as const) {
        s.lanes[l].policy.defaults.sampling = true;
        s.lanes[l].policy.defaults.consent = 'allow';
        s.lanes[l].policy.servers = {};
      }
      const file = join(dir, `${name}.json`);
      writeFileSync(
        file,
        // Text, so the name is an own member as a file delivers it; lane A's block comes first.
        JSON.stringify(s).replace(
          '"servers":{}',
          `"servers":{${JSON.stringify(name)}:{"sampling":false}}`
        )
      );
      const r = await inProcess('run', [file]);
      expect(r.code).toBe(0);
      // Lane A: none of its requests reach the model; lane B (no block) calls it.
      expect(r.stdout).toMatch(/^provider calls\s+0\s+[1-9]\d*$/m);
    }
  );

  it('lab identity: params nested 2,000 deep are refused with the limit and the path, exit 2', async () => {
    const deep = `{"messages":[],"metadata":${'['.repeat(2000)}${']'.repeat(2000)}}`;
    const r = await inProcess('identity', ['--server', 'x'], deep);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      "lab: identity: $.metadata[0][0][0][0][0]…: nested deeper than 64 levels (the limit for a request's params)\n"
    );
  });

  it('lab run: a run over the work budget is refused in one line, exit 2 (real process)', () => {
    const s = structuredClone(base);
    s.servers = [{ ...s.servers[0], count: 1000, intervalMs: 1000 }];
    s.durationMs = 600_000;
    const file = join(dir, 'heavy.json');
    writeFileSync(file, JSON.stringify(s));
    const r = lab(['run', file]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(
      /^lab: .*heavy\.json: \$: this run would be about 28,350,000 requests \/ [\d,]+ MB; the limit is 8,000,000 requests \/ 64,000 MB/
    );
  });
});
