/**
 * `lab import` and the page's drop: the logs MCP clients write, as a lab trace (`trace.ts`).
 *
 *   const imp = new TrafficImport({ format: 'auto' });
 *   imp.begin('mcp-server-weather.log');
 *   for (const [i, line] of lines.entries()) imp.line(line, i + 1);
 *   imp.end();
 *   const r = imp.finish(); // { events, report } or { error }
 *
 * Line by line, so a file streams (an Inspector export, one JSON array, is gathered and parsed at
 * its end, within the caller's size bound). Each file's format is told from its first line that
 * looks like one (see {@link detectFormat}) unless given. Pure: no Node APIs.
 */
import { Assembler, type ImportFormat, type ImportResult } from './assemble';
import { AuditLines, isAuditRecord } from './audit';
import { claudeLine, isClaudeLine } from './claude';
import { inspectorText } from './inspector';
import { ndjsonLine } from './ndjson';

export * from './assemble';

export interface ImportOptions {
  format?: ImportFormat | 'auto';
  /** The server of a log that names none (an Inspector export, a raw capture). */
  server?: string;
}

/** Lines looked at for a format before the file is given up on. */
const DETECT_LINES = 50;

/**
 * A file's format from one of its first lines, or null when this line does not tell: a JSON
 * array's start is an Inspector export; `TIME [x] [level]` or `TIME [level] [x]` is Claude
 * Desktop's; a JSON object with an audit record's members is the lab's audit; any other JSON
 * object (maybe after a prefix) is a raw capture.
 */
export function detectFormat(line: string): ImportFormat | null {
  const s = line.replace(/^\uFEFF/, '').trim();
  if (!s) return null;
  if (/^\[\s*(\{|\]|$)/.test(s)) return 'inspector';
  if (isClaudeLine(s)) return 'claude';
  if (s.startsWith('{')) {
    try {
      return isAuditRecord(JSON.parse(s)) ? 'audit' : 'ndjson';
    } catch {
      return null;
    }
  }
  if (/\{.*\}\s*$/.test(s)) return 'ndjson';
  return null;
}

/** A file's name without its folders and extension: the server of a log that names none. */
export function serverFromFile(file: string): string {
  const base = file.split(/[\\/]/).pop() ?? file;
  const name = base.replace(/\.[^.]*$/, '');
  return (name || base || 'stdio').slice(0, 200);
}

export class TrafficImport {
  readonly #a = new Assembler();
  readonly #audit = new AuditLines(this.#a);
  readonly #opts: ImportOptions;
  /** Claude: the file each server's lines are read from (mcp.log repeats mcp-server-*.log). */
  readonly #owner = new Map<string, string>();
  #file = '';
  #format: ImportFormat | null = null;
  #lines = 0;
  #held: [string, number][] = [];
  #inspector: string[] = [];
  #error: string | null = null;

  constructor(opts: ImportOptions = {}) {
    this.#opts = opts;
    if (opts.server !== undefined && opts.format !== undefined && opts.format !== 'auto') {
      if (opts.format === 'claude' || opts.format === 'audit')
        this.#error = `--server: the ${opts.format} format names its servers itself`;
    }
  }

  /** The first error that stops the import, if any. */
  get error(): string | null {
    return this.#error ?? this.#a.error;
  }

  begin(file: string): void {
    this.#file = file;
    this.#lines = 0;
    this.#held = [];
    this.#inspector = [];
    const f = this.#opts.format;
    this.#format = f && f !== 'auto' ? f : null;
  }

  /** One line of the current file (without its line break); false once the import has stopped. */
  line(text: string, n: number): boolean {
    if (this.error) return false;
    this.#lines = n;
    if (n === 1) text = text.replace(/^\uFEFF/, '');
    if (this.#format === null) {
      this.#held.push([text, n]);
      const f = detectFormat(text);
      if (f) {
        this.#format = f;
        this.#checkServer();
        const held = this.#held;
        this.#held = [];
        for (const [t, k] of held) this.#dispatch(t, k);
      } else if (this.#held.length >= DETECT_LINES) {
        this.#error = `${this.#file}: cannot tell the format from its first ${DETECT_LINES} lines: not a Claude Desktop log, an Inspector export, a JSON-RPC capture or an audit log (lab import --format names it)`;
      }
      return !this.error;
    }
    this.#dispatch(text, n);
    return !this.error;
  }

  #checkServer(): void {
    if (this.#opts.server !== undefined && (this.#format === 'claude' || this.#format === 'audit'))
      this.#error = `--server: ${this.#file} is in the ${this.#format} format, which names its servers itself`;
  }

  #dispatch(text: string, n: number): void {
    if (this.error) return;
    const where = { file: this.#file, line: n };
    if (this.#format === 'inspector') {
      this.#inspector.push(text);
      return;
    }
    if (!text.trim()) return;
    switch (this.#format) {
      case 'claude':
        return claudeLine(this.#a, text, where, (server) => {
          const owner = this.#owner.get(server);
          if (owner === undefined) this.#owner.set(server, this.#file);
          return owner === undefined || owner === this.#file ? null : owner;
        });
      case 'audit':
        return this.#audit.line(text, where);
      default:
        return ndjsonLine(this.#a, text, where, this.#opts.server ?? serverFromFile(this.#file));
    }
  }

  /** The current file is done. */
  end(): void {
    if (this.error) return;
    if (this.#format === null) {
      if (this.#held.some(([t]) => t.trim()))
        this.#error = `${this.#file}: cannot tell its format: not a Claude Desktop log, an Inspector export, a JSON-RPC capture or an audit log (lab import --format names it)`;
      this.#a.file(this.#file, 'ndjson', this.#lines);
      return;
    }
    this.#a.file(this.#file, this.#format, this.#lines);
    if (this.#format === 'inspector') {
      const text = this.#inspector.join('\n');
      this.#inspector = [];
      const server = this.#opts.server ?? serverFromFile(this.#file);
      this.#error = inspectorText(this.#a, text, this.#file, server);
    }
  }

  finish(): ImportResult {
    if (this.error) return { ok: false, error: this.error };
    this.#audit.finish();
    const r = this.#a.finish();
    if (r.ok && r.report.sampling === 0 && r.events.length === 0)
      return { ok: false, error: 'the log holds no MCP traffic the lab can read' };
    return r;
  }
}

/** Import whole texts (the page, tests): each `[name, text]` a file. */
export function importTexts(files: [string, string][], opts: ImportOptions = {}): ImportResult {
  const imp = new TrafficImport(opts);
  for (const [name, text] of files) {
    imp.begin(name);
    const lines = text.split('\n');
    if (lines.at(-1) === '') lines.pop();
    for (let i = 0; i < lines.length; i++) {
      const l = lines[i]!;
      if (!imp.line(l.endsWith('\r') ? l.slice(0, -1) : l, i + 1)) break;
    }
    imp.end();
  }
  return imp.finish();
}
