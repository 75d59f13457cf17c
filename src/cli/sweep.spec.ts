/**
 * `lab sweep`: the same bytes whatever the worker count, exit 3 naming the point and seed of a run
 * that broke a guarantee, the `--require` gate, and one-line errors for bad input.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runOnce, type SeedRun } from '../lib/sim/sweep';
import { commands, runCommand } from './commands';
import { reportSweep, sweepAndWrite } from './sweep';

const dir = mkdtempSync(join(tmpdir(), 'lab-sweep-spec-'));

let made = 0;

/** Ten minutes of the reconnect-bypass lesson, 2 points × 2 seeds: seconds, not minutes. */
function sweepFile(over: Record<string, unknown> = {}): string {
  const file = join(dir, `sweep-${++made}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      version: 1,
      // Not beside the sweep file: found in the working directory (the repository).
      scenario: 'static/scenarios/reconnect-bypass.json',
      grid: { 'lanes.A.client.store': ['connection', 'durable'], durationMs: [600_000] },
      seeds: [1, 2],
      objectives: { 'A.consentPrompts': 'min', 'A.providerCalls': 'max' },
      constraints: ['A.abandoned <= 50'],
      ...over
    })
  );
  return file;
}

function capture() {
  const io = { out: '', err: '' };
  return {
    io,
    use: {
      out: (s: string) => void (io.out += s),
      err: (s: string) => void (io.err += s),
      stdin: async () => ''
    }
  };
}

const files = (out: string) =>
  ['points.json', 'points.csv', 'pareto.json'].map((f) => readFileSync(join(out, f), 'utf8'));

describe('lab sweep', () => {
  it('writes byte-identical points.json, points.csv and pareto.json with 1 and 2 workers', async () => {
    const file = sweepFile();
    const outs = [join(dir, 'w1'), join(dir, 'w2')];
    for (const [i, out] of outs.entries()) {
      const c = capture();
      const code = await runCommand(
        commands.sweep!,
        [file, '--workers', String(i + 1), '--out', out],
        c.use
      );
      expect(c.io.err).toBe('');
      expect(code).toBe(0);
      expect(c.io.out).toContain(`2 points × 2 seeds = 4 runs on ${i + 1} worker`);
    }
    const [one, two] = outs.map(files);
    expect(two).toEqual(one);
    const points = JSON.parse(one![0]!);
    expect(points).toHaveLength(2);
    expect(points[0].settings).toEqual({
      'lanes.A.client.store': 'connection',
      durationMs: 600_000
    });
    expect(points[0].metrics['A.consentPrompts'].bySeed).toHaveLength(2);
    expect(points[0].feasible).toBe(true);
    // Fewer prompts for the durable store: point 1 is on the front whatever else is.
    expect(JSON.parse(one![2]!)).toContain(1);
    expect(one![1]!.split('\n')).toHaveLength(4);
  });

  it('exits 1 when no feasible point meets --require, and says so in one line', async () => {
    const c = capture();
    const code = await runCommand(
      commands.sweep!,
      [sweepFile(), '--workers', '1', '--require', 'A.consentPrompts < 0'],
      c.use
    );
    expect(code).toBe(1);
    expect(c.io.err).toBe('lab: sweep: no feasible point meets --require "A.consentPrompts < 0"\n');
  });

  /** The runs in-process, as the workers would make them, with frames checked by `validate`. */
  const inProcess =
    (validate: Parameters<typeof runOnce>[3]) =>
    async (plan: Parameters<typeof reportSweep>[0]['plan']): Promise<SeedRun[][]> =>
      plan.points.map((p) => plan.seeds.map((s) => runOnce(p.scenario, s, plan.metrics, validate)));

  it('passes --require when a feasible point meets it, naming the point', async () => {
    const file = sweepFile();
    const r = await sweepAndWrite({
      file,
      workers: 1,
      require: [
        {
          text: 'A.consentPrompts <= 100',
          metric: 'A.consentPrompts',
          aggregate: 'mean',
          op: '<=',
          value: 100
        }
      ],
      runner: inProcess(undefined)
    });
    const c = capture();
    expect(reportSweep(r, c.use)).toBe(0);
    expect(c.io.out).toMatch(/--require "A\.consentPrompts <= 100": met by point \d/);
  });

  it('exits 3 naming the point and seed of the first run that broke a guarantee', async () => {
    const r = await sweepAndWrite({
      file: sweepFile(),
      workers: 1,
      require: [],
      // A validator that refuses every error frame: each run's first denial breaks frames-conform.
      runner: inProcess((f) => ('error' in f ? 'refused by the test' : null))
    });
    const c = capture();
    expect(reportSweep(r, c.use)).toBe(3);
    expect(c.io.err).toMatch(
      /^lab: point 0 \(lanes\.A\.client\.store = "connection", durationMs = 600000\), seed 1: invariant frames-conform broken: refused by the test .* \(and 3 more runs\)\n$/
    );
    expect(r.results.points[0]!.guarantees['frames-conform']).toBe('broken');
  });

  it('refuses bad input in one line, exit 2', async () => {
    const cases: [string[], RegExp][] = [
      [
        [sweepFile(), '--require', 'A.prompts < 3'],
        /^lab: sweep: --require "A\.prompts": an unknown metric/
      ],
      [
        [sweepFile(), '--workers', '0'],
        /^lab: sweep: --workers must be a whole number from 1 to 999/
      ],
      [
        [sweepFile({ scenario: 'nowhere.json' })],
        /: \$\.scenario: "nowhere\.json" is neither beside the sweep file nor in the working directory$/
      ],
      [
        [sweepFile({ grid: { 'lanes.A.client.store': ['disk'] } })],
        /: point 0 \(lanes\.A\.client\.store = "disk"\): makes an invalid scenario: \$\.lanes\.A\.client\.store: /
      ],
      [[join(dir, 'absent.json')], /absent\.json/]
    ];
    for (const [args, want] of cases) {
      const c = capture();
      expect(await runCommand(commands.sweep!, args, c.use), args.join(' ')).toBe(2);
      expect(c.io.err.trimEnd().split('\n')).toHaveLength(1);
      expect(c.io.err.trimEnd()).toMatch(want);
    }
  });
});
