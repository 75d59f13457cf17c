import {
  depthExceeded,
  depthPathText,
  loneSurrogateAt,
  LONE_SURROGATE,
  MAX_PARAMS_DEPTH,
  requestIdentity
} from '../lib/machine/identity';
import { parseBreak, BREAK_SYNTAX, type BreakCondition } from '../lib/sim/timeline/breakpoints';
import { quote } from '../lib/machine/excerpt';
import { parseJsonText } from '../lib/machine/policy/json-strict';
import { MAX_PARAMS_BYTES, MAX_SCENARIO_BYTES, MAX_TRACE_BYTES } from '../lib/sim/input/text-input';
import { parseArgs, parseSeed, parseSpan, readStdin } from './io';
import { formatSpan } from '../lib/sim/engine/extend';
import { CliError, loadScenario, loadTrace, reportRun, runAndWrite, type Source } from './run';
import { importFiles, importReportText, parseFormat } from './import';
import { matrixText, refusalMatrix } from '../lib/sim/report/refusal-matrix';
import { availableParallelism } from 'node:os';
import { parseConstraint, type Constraint } from '../lib/sim/sweep/metrics';
import { reportSweep, sweepAndWrite } from './sweep';

/** Where a command reads and writes: the process, or a test capturing both streams. */
export interface Io {
  out(s: string): void;
  err(s: string): void;
  /** Standard input's text, at most `maxBytes` (a `CliError` past that); `what` names it. */
  stdin(maxBytes: number, what: string): Promise<string>;
  /** A progress line, overwritten by the next (a terminal only; absent otherwise). */
  progress?(s: string): void;
}

const processIo: Io = {
  out: (s) => void process.stdout.write(s),
  err: (s) => void process.stderr.write(s),
  stdin: (maxBytes, what) => readStdin(maxBytes, what),
  ...(process.stderr.isTTY
    ? { progress: (s: string) => void process.stderr.write(`\r\x1b[2K${s}`) }
    : {})
};

export interface Command {
  usage: string;
  run(args: string[]): Promise<number>;
}

let io: Io = processIo;

function fail(message: string): number {
  io.err(`lab: ${message}\n`);
  return 2;
}

/** Run a command in-process with its streams going to `use`; exit code as `main` would return it. */
export async function runCommand(command: Command, args: string[], use: Io): Promise<number> {
  const before = io;
  io = use;
  try {
    return await command.run(args);
  } finally {
    io = before;
  }
}

const identity: Command = {
  usage: 'identity --server NAME [--no-canonicalize] < params.json',
  async run(args) {
    const a = parseArgs(args, { values: ['server'], flags: ['no-canonicalize'] });
    if (!a.ok) return fail(a.error);
    const server = a.values.server;
    if (!server) return fail('identity: --server NAME is required');
    let text: string;
    try {
      text = await io.stdin(MAX_PARAMS_BYTES, 'request params');
    } catch (e) {
      if (e instanceof CliError) return fail(`identity: ${e.message}`);
      throw e;
    }
    const json = parseJsonText(text);
    if (!json.ok) {
      const e = json.error;
      return fail(
        e.path === '$'
          ? `identity: standard input is ${e.message}`
          : `identity: standard input: ${e.path}: ${e.message}`
      );
    }
    const params = json.value;
    if (params === null || typeof params !== 'object' || Array.isArray(params)) {
      return fail('identity: standard input must be a JSON object (the request params)');
    }
    const p = params as Record<string, unknown>;
    // Accept a whole JSON-RPC request as well as bare params.
    const wrapped =
      p.method === 'sampling/createMessage' && p.params && typeof p.params === 'object';
    const bare = wrapped ? p.params : p;
    // The same depth limit as a trace or a scenario, checked before the canonicaliser recurses.
    const deep = depthExceeded(bare, MAX_PARAMS_DEPTH);
    if (deep) {
      return fail(
        `identity: ${depthPathText(wrapped ? ['params', ...deep] : deep)}: nested deeper than ${MAX_PARAMS_DEPTH} levels (the limit for a request's params)`
      );
    }
    const lone = loneSurrogateAt(bare);
    if (lone) {
      return fail(
        `identity: ${depthPathText(wrapped ? ['params', ...lone] : lone)}: ${LONE_SURROGATE}`
      );
    }
    io.out(requestIdentity(server, bare, { canonicalize: !a.flags['no-canonicalize'] }) + '\n');
    return 0;
  }
};

async function guarded(f: () => number | Promise<number>): Promise<number> {
  try {
    return await f();
  } catch (e) {
    if (e instanceof CliError) return fail(e.message);
    throw e;
  }
}

/** A file argument: `-` is standard input (read here, bounded), any other name a file. */
async function source(file: string, what: string, maxBytes: number): Promise<Source> {
  return file === '-' ? { file, stdin: await io.stdin(maxBytes, what) } : { file };
}

/** `--restart-at 30m` (repeatable, or comma-separated): virtual ms from the start, or an error. */
function restartTimes(texts: string[]): number[] | string {
  const out: number[] = [];
  for (const text of texts.flatMap((t) => t.split(','))) {
    const ms = parseSpan(text);
    if (ms === null)
      return `--restart-at: ${quote(text)} is not a time such as 30m, 1h30m, 90s or 1500 (ms)`;
    out.push(ms);
  }
  return out;
}

/** `--break COND` (repeatable): the conditions, or the first error. */
function breakConditions(texts: string[]): BreakCondition[] | string {
  const out: BreakCondition[] = [];
  for (const text of texts) {
    const r = parseBreak(text);
    if (!r.ok) return `--break: ${r.error}`;
    out.push(r.condition);
  }
  return out;
}

const run: Command = {
  usage: `run SCENARIO.json [--seed N] [--out DIR] [--twice] [--restart-at TIME]... [--break COND]...
      SCENARIO.json      a file, or - for standard input
      --seed N           a decimal integer from 0 to 4294967295
      --restart-at TIME  restart the client at that virtual time (30m, 1h30m, 90s, 1500 = ms):
                         connections drop and reopen, lane decisions on connections are lost,
                         durable ones kept (repeatable)
      --break COND       stop when COND first holds and print the facts as JSON (repeatable):
                         ${BREAK_SYNTAX}
      exit codes: 0 ran to the end, 2 bad input, 3 a guarantee broken, 4 stopped at a breakpoint`,
  async run(args) {
    const a = parseArgs(args, {
      values: ['seed', 'out'],
      flags: ['twice'],
      lists: ['restart-at', 'break']
    });
    if (!a.ok) return fail(`run: ${a.error}`);
    const [file, extra] = a.positional;
    if (!file || extra) return fail('run: give exactly one scenario file');
    let seed: number | undefined;
    if (a.values.seed !== undefined) {
      const s = parseSeed(a.values.seed);
      if (!s.ok) return fail(`run: ${s.error}`);
      seed = s.seed;
    }
    const restartAt = restartTimes(a.lists['restart-at'] ?? []);
    if (typeof restartAt === 'string') return fail(`run: ${restartAt}`);
    const breaks = breakConditions(a.lists.break ?? []);
    if (typeof breaks === 'string') return fail(`run: ${breaks}`);
    return guarded(async () => {
      const scenario = loadScenario(await source(file, 'scenario', MAX_SCENARIO_BYTES));
      const late = restartAt.find((ms) => ms > scenario.durationMs);
      if (late !== undefined)
        return fail(
          `run: --restart-at ${formatSpan(late)} is past the scenario's end (${formatSpan(scenario.durationMs)})`
        );
      const out = a.values.out;
      return reportRun(
        runAndWrite({
          scenario,
          ...(seed !== undefined ? { seed } : {}),
          ...(out ? { out } : {}),
          twice: !!a.flags.twice,
          restartAt,
          breaks
        }),
        io
      );
    });
  }
};

const replay: Command = {
  usage:
    'replay TRACE.jsonl --scenario SCENARIO.json [--out DIR] [--twice]   (either file may be -)',
  async run(args) {
    const a = parseArgs(args, { values: ['scenario', 'out'], flags: ['twice'] });
    if (!a.ok) return fail(`replay: ${a.error}`);
    const [file, extra] = a.positional;
    if (!file || extra) return fail('replay: give exactly one trace file');
    if (!a.values.scenario) return fail('replay: --scenario SCENARIO.json is required');
    const scenarioFile = a.values.scenario;
    if (file === '-' && scenarioFile === '-')
      return fail('replay: only one of the trace and the scenario can be read from standard input');
    return guarded(async () => {
      const scenario = loadScenario(await source(scenarioFile, 'scenario', MAX_SCENARIO_BYTES));
      const trace = loadTrace(await source(file, 'trace', MAX_TRACE_BYTES));
      const out = a.values.out;
      return reportRun(
        runAndWrite({ scenario, trace, ...(out ? { out } : {}), twice: !!a.flags.twice }),
        io
      );
    });
  }
};

const importLog: Command = {
  usage: `import FILE... --out TRACE.jsonl [--format auto|claude|inspector|ndjson|audit] [--server NAME]
      FILE               Claude Desktop's mcp-server-NAME.log or mcp.log, an MCP Inspector history
                         export, a raw stdio capture (NDJSON), or the lab's audit JSONL
      --format           each file's format (default auto: told from its first lines)
      --server NAME      the server of a log that names none (Inspector, raw capture; default:
                         the file's name without its extension)`,
  async run(args) {
    const a = parseArgs(args, { values: ['format', 'server', 'out'] });
    if (!a.ok) return fail(`import: ${a.error}`);
    if (a.positional.length === 0) return fail('import: give at least one log file');
    if (a.positional.includes('-'))
      return fail('import: give files (a log is not read from standard input)');
    const out = a.values.out;
    if (!out) return fail('import: --out TRACE.jsonl is required');
    const format = parseFormat(a.values.format);
    if (format !== 'auto' && !['claude', 'inspector', 'ndjson', 'audit'].includes(format))
      return fail(`import: ${format}`);
    const server = a.values.server;
    if (server !== undefined && (server.length === 0 || server.length > 200))
      return fail('import: --server must be 1 to 200 characters');
    return guarded(() => {
      const progress = io.progress;
      const r = importFiles({
        files: a.positional,
        format: format as 'auto',
        ...(server !== undefined ? { server } : {}),
        out,
        ...(progress ? { progress } : {})
      });
      if (progress) progress('');
      io.out(importReportText(r.report, out, r.events) + '\n');
      return 0;
    });
  }
};

const styles: Command = {
  usage: `styles SCENARIO.json [--lane A|B] [--seed N]
      run the scenario once per refusal style (lab, spec, vscode, inspector, python-default,
      cursor), the lane (default B) refusing as that client does, and print the matrix`,
  async run(args) {
    const a = parseArgs(args, { values: ['seed', 'lane'] });
    if (!a.ok) return fail(`styles: ${a.error}`);
    const [file, extra] = a.positional;
    if (!file || extra) return fail('styles: give exactly one scenario file');
    const lane = a.values.lane ?? 'B';
    if (lane !== 'A' && lane !== 'B')
      return fail(`styles: --lane must be A or B, got ${quote(lane)}`);
    let seed: number | undefined;
    if (a.values.seed !== undefined) {
      const s = parseSeed(a.values.seed);
      if (!s.ok) return fail(`styles: ${s.error}`);
      seed = s.seed;
    }
    return guarded(async () => {
      const scenario = loadScenario(await source(file, 'scenario', MAX_SCENARIO_BYTES));
      const data = seed === undefined ? scenario.data : { ...scenario.data, seed };
      const m = refusalMatrix(data, lane);
      if (!m.ok) return fail(`styles: ${file}: ${m.errors[0]!.path}: ${m.errors[0]!.message}`);
      io.out(
        `lane ${lane}, seed ${data.seed}, one run per refusal style:\n${matrixText(m.rows)}\n`
      );
      return 0;
    });
  }
};

const sweep: Command = {
  usage: `sweep SWEEP.json [--workers N] [--out DIR] [--require EXPR]...
      run every point of the sweep file's grid on every seed, in N worker threads (default: one
      per core); the output is the same whatever N. --out DIR: where points.json, points.csv
      and pareto.json are written (without it, only the summary is printed)
      --require EXPR     a CI gate, such as "A.consentPrompts <= 20": exit 1 unless some feasible
                         point meets every --require (repeatable)
      exit codes: 0 done, 1 --require unmet, 2 bad input, 3 a run broke a guarantee`,
  async run(args) {
    const a = parseArgs(args, { values: ['workers', 'out'], lists: ['require'] });
    if (!a.ok) return fail(`sweep: ${a.error}`);
    const [file, extra] = a.positional;
    if (!file || extra) return fail('sweep: give exactly one sweep file');
    if (file === '-') return fail('sweep: give a file (its scenario path is read beside it)');
    let workers = availableParallelism();
    if (a.values.workers !== undefined) {
      if (!/^[1-9]\d{0,2}$/.test(a.values.workers))
        return fail(
          `sweep: --workers must be a whole number from 1 to 999, got ${quote(a.values.workers)}`
        );
      workers = Number(a.values.workers);
    }
    const require: Constraint[] = [];
    for (const text of a.lists.require ?? []) {
      const c = parseConstraint(text);
      if (!c.ok) return fail(`sweep: --require ${c.error}`);
      require.push(c.constraint);
    }
    return guarded(async () => {
      const out = a.values.out;
      const progress = io.progress;
      const r = await sweepAndWrite({
        file,
        workers,
        require,
        // The estimate before the runs, so a long sweep says what it is doing first.
        announce: (line) => io.out(line + '\n'),
        ...(out ? { out } : {}),
        ...(progress ? { progress } : {})
      });
      return reportSweep(r, io);
    });
  }
};

export const commands: Record<string, Command> = {
  identity,
  run,
  replay,
  import: importLog,
  styles,
  sweep
};
