/**
 * What `lab` reads and where it writes, bounded. A file is opened without blocking (a FIFO with
 * no writer would hang `open` forever) and checked before a byte is read: a device, a FIFO or a
 * directory is refused, and so is a file over the limit (a 3 GB sparse file is refused by its
 * size, not after reading 4 GB). Reading stops at the limit even when the size lied (a /proc
 * file says 0). Text is decoded by the lab's one rule (`text-input.ts`). Standard input is read
 * only when asked for (`-`), to the same bounds.
 */
import {
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  openSync,
  readSync,
  realpathSync,
  statSync
} from 'node:fs';
import type { Stats } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { quote } from '../lib/machine/excerpt';
import { notUtf8, sizeRefusal, TextDecodeStream, type Decoded } from '../lib/sim/input/text-input';

export class CliError extends Error {}

/** A file name as a message shows it: as typed when plain, quoted and escaped otherwise. */
export function fileName(file: string): string {
  return /^[\w./@+:,=~-]{1,200}$/.test(file) ? file : quote(file, 200);
}

function kind(s: Stats): string {
  if (s.isFile()) return 'a file';
  if (s.isDirectory()) return 'a directory';
  if (s.isFIFO()) return 'a FIFO (named pipe)';
  if (s.isCharacterDevice()) return 'a character device';
  if (s.isBlockDevice()) return 'a block device';
  if (s.isSocket()) return 'a socket';
  return 'neither a file nor a directory';
}

const CHUNK = 1 << 20;

/**
 * Open a regular file for reading, or refuse it in one line. `O_NONBLOCK` so that a FIFO is
 * opened (and refused) at once instead of waiting for a writer.
 */
function openRegular(file: string, what: string, maxBytes: number): { fd: number; size: number } {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    throw new CliError(`${fileName(file)}: cannot read the ${what} (${errCode(e)})`);
  }
  const s = fstatSync(fd);
  if (!s.isFile()) {
    closeSync(fd);
    throw new CliError(
      `${fileName(file)}: the ${what} is ${kind(s)}, not a file: give a file, or - to read standard input`
    );
  }
  const big = sizeRefusal(what, s.size, maxBytes);
  if (big) {
    closeSync(fd);
    throw new CliError(`${fileName(file)}: ${big}`);
  }
  return { fd, size: s.size };
}

function errCode(e: unknown): string {
  return (e as NodeJS.ErrnoException).code ?? (e as Error).message;
}

/** The chunks of a file, at most `maxBytes` of them in all (a refusal past that). */
function* chunks(file: string, what: string, maxBytes: number): Generator<Uint8Array> {
  const { fd } = openRegular(file, what, maxBytes);
  try {
    let total = 0;
    for (;;) {
      const buf = new Uint8Array(CHUNK);
      let n: number;
      try {
        n = readSync(fd, buf, 0, CHUNK, null);
      } catch (e) {
        throw new CliError(`${fileName(file)}: cannot read the ${what} (${errCode(e)})`);
      }
      if (n === 0) return;
      total += n;
      const big = sizeRefusal(what, total, maxBytes);
      if (big) throw new CliError(`${fileName(file)}: ${big} (it grew while it was read)`);
      yield buf.subarray(0, n);
    }
  } finally {
    closeSync(fd);
  }
}

function decoded(file: string, what: string, maxBytes: number, d: Decoded): string {
  if (d.ok) return d.text;
  const why = d.utf8 ? notUtf8(chunks(file, what, maxBytes)) : d.error;
  throw new CliError(`${fileName(file)}: the ${what} cannot be read: ${why}`);
}

/** A whole (bounded) file as text. */
export function readTextFile(file: string, what: string, maxBytes: number): string {
  const parts: string[] = [];
  const d = new TextDecodeStream();
  for (const c of chunks(file, what, maxBytes))
    parts.push(decoded(file, what, maxBytes, d.push(c)));
  parts.push(decoded(file, what, maxBytes, d.end()));
  return parts.join('');
}

/**
 * A (bounded) file line by line, each line without its line break (`\n` or `\r\n`), numbered
 * from 1; a line longer than `maxLineChars` is refused as soon as it is, so memory stays within
 * one line and what the caller keeps. `onLine` returns false to stop.
 */
export function readLines(
  file: string,
  what: string,
  maxBytes: number,
  maxLineChars: number,
  onLine: (line: string, n: number) => boolean
): void {
  const d = new TextDecodeStream();
  let partial = '';
  let n = 0;
  let stopped = false;
  const feed = (text: string): void => {
    let from = 0;
    for (;;) {
      const nl = text.indexOf('\n', from);
      if (nl < 0) break;
      let line = partial + text.slice(from, nl);
      partial = '';
      if (line.endsWith('\r')) line = line.slice(0, -1);
      from = nl + 1;
      if (line.length > maxLineChars) tooLong(n + 1);
      if (!onLine(line, ++n)) {
        stopped = true;
        return;
      }
    }
    partial += text.slice(from);
    if (partial.length > maxLineChars) tooLong(n + 1);
  };
  const tooLong = (line: number): never => {
    throw new CliError(
      `${fileName(file)}: line ${line}: longer than ${maxLineChars.toLocaleString('en-US')} characters, the limit for one line of a ${what}`
    );
  };
  for (const c of chunks(file, what, maxBytes)) {
    feed(decoded(file, what, maxBytes, d.push(c)));
    if (stopped) return;
  }
  feed(decoded(file, what, maxBytes, d.end()));
  if (!stopped && partial) onLine(partial.endsWith('\r') ? partial.slice(0, -1) : partial, ++n);
}

/** Places a run never writes into: kernel views, where a recursive mkdir can loop forever. */
const SYSTEM = ['/proc', '/sys', '/dev'];

/**
 * Make the output directory, bounded: each missing component is made once, without `recursive`
 * (Node's recursive mkdir never returns under /proc, where mkdir answers ENOENT for a parent that
 * exists), and a directory under /proc, /sys or /dev is refused outright. An existing path must be
 * a directory.
 */
export function makeOutDir(out: string): void {
  const missing: string[] = [];
  let at = resolve(out);
  let s: Stats | null = null;
  for (;;) {
    try {
      s = statSync(at);
      break;
    } catch (e) {
      // ENOTDIR: a file stands where a directory should; the walk up finds and names it.
      if (errCode(e) !== 'ENOENT' && errCode(e) !== 'ENOTDIR')
        throw new CliError(`--out ${fileName(out)}: cannot use ${fileName(at)} (${errCode(e)})`);
    }
    missing.push(at);
    const up = dirname(at);
    if (up === at) break;
    at = up;
  }
  // Where the path really is, links followed: a link into /proc is /proc.
  const real = s ? realpathSync(at) : at;
  const system = SYSTEM.find((p) => real === p || real.startsWith(p + '/'));
  if (system)
    throw new CliError(
      `--out ${fileName(out)}: a run does not write under ${system}: give another directory`
    );
  if (s && !s.isDirectory())
    throw new CliError(`--out ${fileName(out)}: ${fileName(at)} is ${kind(s)}, not a directory`);
  for (const dir of missing.reverse()) {
    try {
      mkdirSync(dir);
    } catch (e) {
      if (errCode(e) === 'EEXIST' && statSync(dir).isDirectory()) continue;
      throw new CliError(`--out ${fileName(out)}: cannot make ${fileName(dir)} (${errCode(e)})`);
    }
  }
}

/**
 * Whether a file in the output directory may be opened for writing without blocking: absent, or a
 * regular file (a FIFO there would wait for a reader forever).
 */
export function checkOutFile(path: string): void {
  let s: Stats;
  try {
    s = statSync(path);
  } catch {
    return;
  }
  if (!s.isFile())
    throw new CliError(`${fileName(path)}: is ${kind(s)}: a run writes a regular file there`);
}
