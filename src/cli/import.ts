/**
 * `lab import FILE… [--format …] [--server NAME] --out trace.jsonl`: the logs MCP clients write,
 * as a lab trace (the readers are `src/lib/sim/import/`, shared with the page). Each file is
 * streamed line by line with the trace's per-line bound, so memory holds one line and the
 * sampling requests kept; a terminal sees the progress on standard error.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { quote } from '../lib/machine/excerpt';
import { formatSpan } from '../lib/sim/engine/extend';
import {
  IMPORT_FORMATS,
  TrafficImport,
  type ImportFormat,
  type ImportReport,
  type Skip
} from '../lib/sim/import';
import { MAX_TRACE_LINE_CHARS, type TraceEvent } from '../lib/sim/input/trace';
import { MAX_TRACE_BYTES } from '../lib/sim/input/text-input';
import { checkOutFile, CliError, fileName, readLines } from './files';

/**
 * The largest log `lab import` reads: logs grow for months, and only the sampling requests in one
 * are kept (within the trace's own bounds), so a log may be far larger than a trace.
 */
export const MAX_LOG_BYTES = 4 * 1024 * 1024 * 1024;
/** An Inspector export is one JSON array, parsed whole: a trace's bound. */
const MAX_INSPECTOR_CHARS = MAX_TRACE_BYTES;
/** Skipped lines listed on standard output; the rest are counted. */
const SKIPS_SHOWN = 100;

export interface ImportArgs {
  files: string[];
  format: ImportFormat | 'auto';
  server?: string;
  out: string;
  /** Called now and then with a progress line (a terminal's standard error). */
  progress?: (line: string) => void;
}

export function parseFormat(text: string | undefined): ImportFormat | 'auto' | string {
  if (text === undefined || text === 'auto') return 'auto';
  if ((IMPORT_FORMATS as readonly string[]).includes(text)) return text as ImportFormat;
  return `--format must be auto, ${IMPORT_FORMATS.join(', ')} (got ${quote(text)})`;
}

/** Read the files, write the trace; the report, or a `CliError` with one line. */
export function importFiles(a: ImportArgs): { report: ImportReport; events: number } {
  const imp = new TrafficImport({
    format: a.format,
    ...(a.server !== undefined ? { server: a.server } : {})
  });
  if (imp.error) throw new CliError(`import: ${imp.error}`);
  for (const file of a.files) {
    imp.begin(file);
    let chars = 0;
    let inspector = false;
    let next = 1 << 20;
    readLines(file, 'log', MAX_LOG_BYTES, MAX_TRACE_LINE_CHARS, (line, n) => {
      chars += line.length + 1;
      if (n === 1) inspector = /^\uFEFF?\s*\[\s*(\{|\]|$)/.test(line) && a.format !== 'ndjson';
      if (inspector && chars > MAX_INSPECTOR_CHARS)
        throw new CliError(
          `${fileName(file)}: an Inspector export is read whole, and this one is more than ${MAX_INSPECTOR_CHARS / 1024 / 1024} MB`
        );
      if (a.progress && chars >= next) {
        next = chars + (1 << 20);
        a.progress(`${fileName(file)}: ${n.toLocaleString('en-US')} lines`);
      }
      return imp.line(line, n);
    });
    imp.end();
    if (imp.error) break;
  }
  const r = imp.finish();
  if (!r.ok) throw new CliError(`import: ${r.error}`);
  writeTrace(a.out, r.events);
  return { report: r.report, events: r.events.length };
}

function writeTrace(out: string, events: TraceEvent[]): void {
  checkOutFile(out);
  let fd: number;
  try {
    fd = openSync(out, 'w');
  } catch (e) {
    throw new CliError(`${fileName(out)}: cannot write (${(e as NodeJS.ErrnoException).code})`);
  }
  try {
    let buf = '';
    for (const e of events) {
      buf += JSON.stringify(e) + '\n';
      if (buf.length > 1 << 20) {
        writeSync(fd, buf);
        buf = '';
      }
    }
    if (buf) writeSync(fd, buf);
  } finally {
    closeSync(fd);
  }
}

function where(s: Skip): string {
  return s.entry !== undefined ? `${s.file}: entry [${s.entry}]` : `${s.file}:${s.line}`;
}

function table(rows: string[][]): string {
  const w = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) => r.map((c, i) => (i === 0 ? c.padEnd(w[i]!) : c.padStart(w[i]!))).join('  '))
    .join('\n');
}

/** What `lab import` prints: what it found, what it skipped, what it wrote. */
export function importReportText(r: ImportReport, out: string, events: number): string {
  const lines: string[] = [];
  lines.push(
    `read ${r.files.map((f) => `${f.file} (${f.format}, ${f.lines.toLocaleString('en-US')} lines)`).join(', ')}`
  );
  const rows = [['server', 'connections', 'sampling', 'result', 'error', 'none']];
  for (const s of r.servers)
    rows.push([
      s.name,
      String(s.connections),
      String(s.sampling),
      String(s.responses.result),
      String(s.responses.error),
      String(s.responses.none)
    ]);
  rows.push([
    'total',
    String(r.connections),
    String(r.sampling),
    String(r.responses.result),
    String(r.responses.error),
    String(r.responses.none)
  ]);
  lines.push('', table(rows), '');
  lines.push(
    `sampling requests answered: ${r.responses.result} with a result, ${r.responses.error} with an error, ${r.responses.none} not at all`
  );
  const codes = Object.entries(r.errorCodes);
  if (codes.length)
    lines.push(`  errors by code: ${codes.map(([c, n]) => `${c} ×${n}`).join(', ')}`);
  lines.push(
    `${r.messages.toLocaleString('en-US')} JSON-RPC messages, ${r.lifecycle} lifecycle lines; ` +
      `${r.inferredConnections} of ${r.connections} connections inferred (an initialize, or traffic, with no lifecycle line)`
  );
  if (r.start !== null)
    lines.push(`from ${new Date(r.start).toISOString()}, spanning ${formatSpan(r.spanMs)}`);
  else lines.push('the log has no times: every event replays at t = 0, in the order logged');
  if (r.skipped) {
    lines.push(
      '',
      `skipped ${r.skipped.toLocaleString('en-US')} line${r.skipped === 1 ? '' : 's'}:`
    );
    for (const s of r.skips.slice(0, SKIPS_SHOWN)) lines.push(`  ${where(s)}: ${s.why}`);
    if (r.skipped > SKIPS_SHOWN)
      lines.push(`  … and ${(r.skipped - SKIPS_SHOWN).toLocaleString('en-US')} more`);
  } else lines.push('', 'skipped no lines');
  lines.push('', `wrote ${events.toLocaleString('en-US')} events to ${fileName(out)}`);
  return lines.join('\n');
}
