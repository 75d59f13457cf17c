/** `lab run` and `lab replay`: a scenario (or a trace against a scenario's lanes), written out. */
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { Simulation, type FrameLine } from '../lib/sim/engine';
import { auditLineJson, frameLineJson, metricsJson, summaryTable } from '../lib/sim/report';
import { parseScenario, type Scenario } from '../lib/sim/scenario';
import { parseTrace, type TraceEvent } from '../lib/sim/trace';
import type { AuditRecord } from '../lib/machine/types';

/** Buffered line writer: a simulated day can produce millions of lines. */
class LineFile {
  #fd: number;
  #buf: string[] = [];
  #size = 0;
  constructor(path: string) {
    this.#fd = openSync(path, 'w');
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

export class CliError extends Error {}

function readText(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new CliError(
      `${file}: cannot read the ${what} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`
    );
  }
}

export function loadScenario(file: string): Scenario {
  const r = parseScenario(readText(file, 'scenario'));
  if (!r.ok) {
    const first = r.errors[0]!;
    const more = r.errors.length > 1 ? ` (and ${r.errors.length - 1} more)` : '';
    throw new CliError(`${file}: ${first.path}: ${first.message}${more}`);
  }
  return r.scenario;
}

export function loadTrace(file: string): TraceEvent[] {
  const r = parseTrace(readText(file, 'trace'));
  if (!r.ok) throw new CliError(`${file}: ${r.error}`);
  return r.events;
}

export interface RunOptions {
  scenario: Scenario;
  seed?: number;
  trace?: TraceEvent[];
  out?: string;
}

/** Run to the end; write frames.jsonl, audit.jsonl and metrics.json into `out`; return the summary. */
export function runAndWrite(o: RunOptions): string {
  let frames: LineFile | null = null;
  let audit: LineFile | null = null;
  if (o.out) {
    mkdirSync(o.out, { recursive: true });
    frames = new LineFile(join(o.out, 'frames.jsonl'));
    audit = new LineFile(join(o.out, 'audit.jsonl'));
  }
  const sim = new Simulation(o.scenario, {
    ...(o.seed !== undefined ? { seed: o.seed } : {}),
    ...(o.trace ? { trace: o.trace } : {}),
    ...(frames ? { onFrame: (l: FrameLine) => frames.line(frameLineJson(l)) } : {}),
    ...(audit ? { onAudit: (r: AuditRecord) => audit.line(auditLineJson(r)) } : {})
  });
  sim.runToEnd();
  frames?.close();
  audit?.close();
  if (o.out) writeFileSync(join(o.out, 'metrics.json'), metricsJson(sim));
  return summaryTable(sim);
}
