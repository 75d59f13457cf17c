/** `lab run` and `lab replay`: a scenario (or a trace against a scenario's lanes), written out. */
import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { sdkFrameProblem } from '../lib/sim/checks/conformance';
import type { FrameLine } from '../lib/sim/engine/engine';
import { RunGuard } from '../lib/sim/checks/guard';
import { brokenLine, type FrameValidator } from '../lib/sim/checks/invariants';
import {
  auditLineJson,
  digestRun,
  frameLineJson,
  guaranteesTable,
  metricsJson,
  summaryTable
} from '../lib/sim/report/report';
import { parseScenario, type Scenario } from '../lib/sim/input/scenario';
import {
  MAX_TRACE_LINE_CHARS,
  parseTrace,
  TraceReader,
  type TraceEvent
} from '../lib/sim/input/trace';
import { MAX_SCENARIO_BYTES, MAX_TRACE_BYTES } from '../lib/sim/input/text-input';
import { checkOutFile, CliError, fileName, makeOutDir, readLines, readTextFile } from './files';
import {
  BreakpointWatcher,
  type BreakCondition,
  type BreakFacts
} from '../lib/sim/timeline/breakpoints';
import { restartNotice } from '../lib/sim/engine/restart';
import { formatSpan as spanText } from '../lib/sim/engine/extend';
import type { AuditRecord } from '../lib/machine/types';
import { isImportedTrace, WhatIfCollector, type WhatIfReport } from '../lib/sim/report/whatif';
import { whatIfCsv, whatIfText } from '../lib/sim/report/whatif-text';

/** Buffered line writer: a simulated day can produce millions of lines. */
class LineFile {
  #fd: number;
  #buf: string[] = [];
  #size = 0;
  constructor(path: string) {
    this.#fd = openOut(path);
  }
  line(s: string): void {
    this.#buf.push(s);
    this.#size += s.length;
    if (this.#size > 1 << 20) this.flush();
  }
  flush(): void {
    if (this.#buf.length) writeSync(this.#fd, this.#buf.join('\n') + '\n');
    this.#buf = [];
    this.#size = 0;
  }
  close(): void {
    this.flush();
    closeSync(this.#fd);
  }
}

export { CliError };

function openOut(path: string): number {
  try {
    return openSync(path, 'w');
  } catch (e) {
    throw new CliError(`${fileName(path)}: cannot write (${(e as NodeJS.ErrnoException).code})`);
  }
}

function writeOut(path: string, text: string): void {
  const fd = openOut(path);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

/** Where a command's input comes from: a file name, or `-` with standard input's text. */
export interface Source {
  file: string;
  /** Standard input's text, when `file` is `-`. */
  stdin?: string;
}

function shown(src: Source): string {
  return src.file === '-' ? 'standard input' : fileName(src.file);
}

export function loadScenario(src: Source | string): Scenario {
  const s = typeof src === 'string' ? { file: src } : src;
  const text = s.stdin ?? readTextFile(s.file, 'scenario', MAX_SCENARIO_BYTES);
  const r = parseScenario(text);
  if (!r.ok) {
    const first = r.errors[0]!;
    const more = r.errors.length > 1 ? ` (and ${r.errors.length - 1} more)` : '';
    throw new CliError(`${shown(s)}: ${first.path}: ${first.message}${more}`);
  }
  return r.scenario;
}

/** A trace, streamed line by line from a file (never read whole), or from standard input's text. */
export function loadTrace(src: Source | string): TraceEvent[] {
  const s = typeof src === 'string' ? { file: src } : src;
  let r;
  if (s.stdin !== undefined) r = parseTrace(s.stdin);
  else {
    const reader = new TraceReader();
    readLines(s.file, 'trace', MAX_TRACE_BYTES, MAX_TRACE_LINE_CHARS, (line, n) =>
      reader.line(line, n)
    );
    r = reader.result();
  }
  if (!r.ok) throw new CliError(`${shown(s)}: ${r.error}`);
  return r.events;
}

export interface RunOptions {
  scenario: Scenario;
  seed?: number;
  trace?: TraceEvent[];
  out?: string;
  /** Run a second time and check the two runs' bytes are identical (the same-bytes guarantee). */
  twice?: boolean;
  /** How frames are validated: the MCP SDK's schemas unless a test says otherwise. */
  validate?: FrameValidator;
  /** Restart the client at these virtual ms from the start (`--restart-at`). */
  restartAt?: number[];
  /** Stop when one of these first holds (`--break`). */
  breaks?: BreakCondition[];
}

/** What a run printed, and the first broken guarantee as one line (exit code 3), if any. */
export interface RunOutcome {
  text: string;
  broken: string | null;
  /** The run stopped at a breakpoint: the facts (printed as JSON, exit code 4). */
  paused?: BreakFacts | null;
  /** An imported trace's replay: what the policy would have done (whatif.ts). */
  whatIf?: WhatIfReport;
}

/** A running SHA-256 of the lines a file gets, so a second run can be compared byte for byte. */
function lineDigest() {
  const h = sha256.create();
  const enc = new TextEncoder();
  return {
    line: (s: string) => h.update(enc.encode(s + '\n')),
    hex: () => bytesToHex(h.digest())
  };
}

/**
 * Run to the end under the invariants; write frames.jsonl, audit.jsonl and metrics.json into
 * `out`; return the summary (with the guarantees) and the first broken guarantee, if any.
 */
export function runAndWrite(o: RunOptions): RunOutcome {
  let frames: LineFile | null = null;
  let audit: LineFile | null = null;
  if (o.out) {
    makeOutDir(o.out);
    for (const f of ['frames.jsonl', 'audit.jsonl', 'metrics.json', 'whatif.json', 'whatif.csv'])
      checkOutFile(join(o.out, f));
    frames = new LineFile(join(o.out, 'frames.jsonl'));
    audit = new LineFile(join(o.out, 'audit.jsonl'));
  }
  const digest = o.twice ? { frames: lineDigest(), audit: lineDigest() } : null;
  const whatIf = o.trace && isImportedTrace(o.trace) ? new WhatIfCollector() : null;
  const runOpts = {
    ...(o.seed !== undefined ? { seed: o.seed } : {}),
    ...(o.trace ? { trace: o.trace } : {}),
    ...(o.restartAt?.length ? { restartAt: o.restartAt } : {})
  };
  const guard = new RunGuard(o.scenario, { validate: o.validate ?? sdkFrameProblem });
  const watcher = new BreakpointWatcher(o.breaks ?? [], guard);
  const sim = watcher.attach(
    guard.simulate(
      o.scenario,
      watcher.options({
        ...runOpts,
        onFrame: (l: FrameLine) => {
          const s = frameLineJson(l);
          frames?.line(s);
          digest?.frames.line(s);
        },
        ...(whatIf ? { onTraceRequest: whatIf.onTraceRequest } : {}),
        onAudit: (r: AuditRecord) => {
          whatIf?.onAudit(r);
          const s = auditLineJson(r);
          audit?.line(s);
          digest?.audit.line(s);
        }
      })
    )
  );
  sim.advanceTo(sim.end);
  if (watcher.hit) {
    frames?.close();
    audit?.close();
    const guarantees = guard.results();
    if (o.out) writeOut(join(o.out, 'metrics.json'), metricsJson(sim, guarantees));
    return { text: JSON.stringify(watcher.hit, null, 2), broken: null, paused: watcher.hit };
  }
  frames?.close();
  audit?.close();
  if (digest) {
    const second = digestRun(o.scenario, runOpts);
    guard.checker.sameBytes({ frames: digest.frames.hex(), audit: digest.audit.hex() }, second);
  }
  const guarantees = guard.results();
  if (o.out) writeOut(join(o.out, 'metrics.json'), metricsJson(sim, guarantees));
  const restarts = sim.restarts.length
    ? '\n\nclient restarts\n' +
      sim.restarts.map((r) => `  at +${spanText(r.t - sim.start)}: ${restartNotice(r)}`).join('\n')
    : '';
  let whatIfReport: WhatIfReport | undefined;
  let whatIfPart = '';
  if (whatIf) {
    whatIfReport = whatIf.report(o.trace!, { A: sim.lanes.A.label, B: sim.lanes.B.label });
    whatIfPart = '\n\n' + whatIfText(whatIfReport);
    if (o.out) {
      writeOut(join(o.out, 'whatif.json'), JSON.stringify(whatIfReport, null, 2) + '\n');
      writeOut(join(o.out, 'whatif.csv'), whatIfCsv(whatIfReport));
    }
  }
  return {
    text: summaryTable(sim) + restarts + whatIfPart + '\n\n' + guaranteesTable(guarantees),
    broken: brokenLine(guarantees),
    ...(whatIfReport ? { whatIf: whatIfReport } : {})
  };
}

/** Where a run's outcome is printed: the process's streams unless a caller captures them. */
export interface RunStreams {
  out(s: string): void;
  err(s: string): void;
}

const processStreams: RunStreams = {
  out: (s) => void process.stdout.write(s),
  err: (s) => void process.stderr.write(s)
};

/**
 * Print a run's outcome: the summary on stdout; a broken guarantee as one line on stderr, exit 3;
 * a breakpoint's facts as JSON on stdout, exit 4.
 */
export function reportRun(r: RunOutcome, io: RunStreams = processStreams): number {
  io.out(r.text + '\n');
  if (r.paused) return 4;
  if (!r.broken) return 0;
  io.err(`lab: ${r.broken}\n`);
  return 3;
}
