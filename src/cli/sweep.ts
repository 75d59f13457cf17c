/**
 * `lab sweep`: a sweep file's every point on every seed, in worker threads, and what came of it
 * (points.json, points.csv, pareto.json). The workers only compute; which worker ran which run,
 * and in what order they finished, never reaches the output: results are placed by (point, seed)
 * and summarised in grid order (results.ts), so the bytes are the same whatever `--workers`.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import {
  brokenRuns,
  paretoJson,
  parseSweep,
  planSweep,
  pointsCsv,
  pointsJson,
  requireGate,
  settingsText,
  sweepResults,
  type SeedRun,
  type SweepPlan,
  type SweepResults
} from '../lib/sim/sweep';
import type { Constraint } from '../lib/sim/sweep/metrics';
import { MAX_SCENARIO_BYTES } from '../lib/sim/input/text-input';
import { checkOutFile, CliError, fileName, makeOutDir, readTextFile } from './files';
import type { SweepTask, SweepWorkerData } from './sweep-worker';

export interface SweepOptions {
  file: string;
  workers: number;
  out?: string;
  require: Constraint[];
  /** A progress line (a terminal only). */
  progress?: (s: string) => void;
  /** Hears the plan's one line (points × seeds, workers, the estimate) before anything runs. */
  announce?: (line: string) => void;
  /** How the runs are made: worker threads ({@link runPlan}) unless a test runs them in-process. */
  runner?: typeof runPlan;
}

export interface SweepOutcome {
  plan: SweepPlan;
  results: SweepResults;
  /** What to print on standard output after the runs (the plan's line too, unless announced). */
  text: string;
  /** Exit 3: the first run that broke a guarantee, as one line; and how many did. */
  broken: { line: string; count: number } | null;
  /** Exit 1: `--require` met by no feasible point. */
  unmet: string | null;
}

/** The sweep file and the scenario it names (beside the sweep file, else in the working directory). */
export function loadSweep(
  file: string,
  require: Constraint[]
): { plan: SweepPlan; scenario: unknown } {
  const text = readTextFile(file, 'sweep', MAX_SCENARIO_BYTES);
  const r = parseSweep(text);
  if (!r.ok) {
    const e = r.errors[0]!;
    const more = r.errors.length > 1 ? ` (and ${r.errors.length - 1} more)` : '';
    throw new CliError(`${fileName(file)}: ${e.path}: ${e.message}${more}`);
  }
  const sweep = r.sweep;
  let scenario: unknown = sweep.scenario;
  if (typeof sweep.scenario === 'string') {
    const beside = resolve(dirname(file), sweep.scenario);
    const here = resolve(sweep.scenario);
    const path = existsSync(beside) ? beside : existsSync(here) ? here : null;
    if (!path)
      throw new CliError(
        `${fileName(file)}: $.scenario: ${JSON.stringify(sweep.scenario)} is neither beside the sweep file nor in the working directory`
      );
    scenario = readTextFile(path, 'scenario', MAX_SCENARIO_BYTES);
  }
  const p = planSweep(sweep, scenario, require);
  if (!p.ok) {
    const e = p.errors[0]!;
    throw new CliError(`${fileName(file)}: ${e.path}: ${e.message}`);
  }
  return { plan: p.plan, scenario };
}

/**
 * A worker thread running sweep-worker.ts. The CLI runs under tsx, whose loader a worker thread
 * does not inherit (and `execArgv: ['--import', 'tsx']` does not reach the worker's first
 * module in Node 20), so a two-line bootstrap registers tsx in the thread, then imports the worker.
 */
function startWorker(data: SweepWorkerData): Worker {
  const tsx = import.meta.resolve('tsx/esm/api');
  const entry = new URL('./sweep-worker.ts', import.meta.url).href;
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(boot, { eval: true, workerData: data });
}

/** Every run of the plan on `workers` threads: `runs[point][seed]`. */
export function runPlan(
  plan: SweepPlan,
  scenario: unknown,
  workers: number,
  progress?: (done: number) => void
): Promise<SeedRun[][]> {
  const runs: SeedRun[][] = plan.points.map(() => []);
  const tasks: SweepTask[] = [];
  for (let point = 0; point < plan.points.length; point++)
    for (let seed = 0; seed < plan.seeds.length; seed++) tasks.push({ point, seed });
  const n = Math.max(1, Math.min(workers, tasks.length));
  const data: SweepWorkerData = { sweep: plan.sweep, scenario, require: plan.require };
  return new Promise((done, fail) => {
    let next = 0;
    let finished = 0;
    const pool: Worker[] = [];
    const stop = (e: unknown) => {
      for (const w of pool) void w.terminate();
      fail(e);
    };
    const give = (w: Worker) => {
      if (next < tasks.length) w.postMessage(tasks[next++]);
    };
    for (let i = 0; i < n; i++) {
      const w = startWorker(data);
      pool.push(w);
      w.on('message', (m: 'ready' | (SweepTask & { run: SeedRun })) => {
        if (m !== 'ready') {
          runs[m.point]![m.seed] = m.run;
          finished++;
          progress?.(finished);
          if (finished === tasks.length) {
            for (const x of pool) void x.terminate();
            done(runs);
            return;
          }
        }
        give(w);
      });
      w.on('error', stop);
      w.on('exit', (code) => {
        if (finished < tasks.length && code !== 0)
          stop(new Error(`a sweep worker stopped (exit code ${code})`));
      });
    }
  });
}

function writeOut(path: string, text: string): void {
  checkOutFile(path);
  try {
    writeFileSync(path, text);
  } catch (e) {
    throw new CliError(`${fileName(path)}: cannot write (${(e as NodeJS.ErrnoException).code})`);
  }
}

const count = (n: number) => Math.round(n).toLocaleString('en-US');

/** A metric's mean as the summary prints it: whole numbers plain, others to two decimals. */
function mean(v: number): string {
  return Number.isInteger(v) ? count(v) : v.toFixed(2);
}

/** Run the sweep, write its files into `out`, and say what came of it. */
export async function sweepAndWrite(o: SweepOptions): Promise<SweepOutcome> {
  const { plan, scenario } = loadSweep(o.file, o.require);
  if (o.out) {
    makeOutDir(o.out);
    for (const f of ['points.json', 'points.csv', 'pareto.json']) checkOutFile(join(o.out, f));
  }
  const workers = Math.max(1, Math.min(o.workers, plan.runs));
  const head =
    `sweep ${plan.sweep.name ?? fileName(o.file)}: ${plan.points.length} points × ${plan.seeds.length} seeds = ${count(plan.runs)} runs ` +
    `on ${workers} worker${workers === 1 ? '' : 's'} (estimate: about ${count(plan.work.requests)} requests, ${count(plan.work.megabytes)} MB)`;
  o.announce?.(head);
  const progress = o.progress;
  const runs = await (o.runner ?? runPlan)(
    plan,
    scenario,
    workers,
    progress && ((done) => progress(`sweep: ${done}/${plan.runs} runs`))
  );
  progress?.('');
  const results = sweepResults(plan, runs);
  if (o.out) {
    writeOut(join(o.out, 'points.json'), pointsJson(results));
    writeOut(join(o.out, 'points.csv'), pointsCsv(plan, results));
    writeOut(join(o.out, 'pareto.json'), paretoJson(results));
  }
  const feasible = results.points.filter((p) => p.feasible).length;
  const objectives = plan.sweep.objectives;
  const lines = [
    ...(o.announce ? [] : [head]),
    `${feasible} of ${results.points.length} points feasible${plan.sweep.constraints.length ? ` (${plan.sweep.constraints.map((c) => c.text).join(', ')})` : ''}; ` +
      `the Pareto front (${objectives.map((x) => `${x.direction} ${x.metric}`).join(', ')}, means over the seeds):`,
    ...results.pareto.map((i) => {
      const p = results.points[i]!;
      const at = objectives.map((x) => `${x.metric} ${mean(p.metrics[x.metric]!.mean)}`).join(', ');
      return `  point ${i}: ${at}  (${settingsText(plan.points[i]!.settings)})`;
    })
  ];
  if (o.out) lines.push(`wrote points.json, points.csv and pareto.json to ${fileName(o.out)}`);
  const broken = brokenRuns(results.points);
  const first = broken[0];
  let unmet: string | null = null;
  if (o.require.length) {
    const at = requireGate(results.points, o.require);
    const req = o.require.map((c) => JSON.stringify(c.text)).join(' and ');
    if (at === null) unmet = `sweep: no feasible point meets --require ${req}`;
    else
      lines.push(
        `--require ${req}: met by point ${at} (${settingsText(plan.points[at]!.settings)})`
      );
  }
  return {
    plan,
    results,
    text: lines.join('\n'),
    broken: first
      ? {
          line: `point ${first.point} (${settingsText(plan.points[first.point]!.settings)}), seed ${first.seed}: ${first.guarantee}`,
          count: broken.length
        }
      : null,
    unmet
  };
}

/**
 * Print a sweep's outcome: the summary on stdout; a run that broke a guarantee as one line on
 * stderr naming its point and seed, exit 3; `--require` unmet, exit 1.
 */
export function reportSweep(
  r: SweepOutcome,
  io: { out(s: string): void; err(s: string): void }
): number {
  io.out(r.text + '\n');
  if (r.broken) {
    const more = r.broken.count > 1 ? ` (and ${r.broken.count - 1} more runs)` : '';
    io.err(`lab: ${r.broken.line}${more}\n`);
    return 3;
  }
  if (r.unmet) {
    io.err(`lab: ${r.unmet}\n`);
    return 1;
  }
  return 0;
}
