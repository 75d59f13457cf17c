/**
 * Bytes → text, one rule for every file the lab reads, in `lab` and in the page's upload alike:
 *
 * - UTF-8 is the encoding (RFC 8259 §8.1). A UTF-8 byte order mark at the start is dropped.
 * - UTF-16 with a byte order mark (what Windows tools call "Unicode") is decoded as UTF-16.
 * - Anything else is refused with a line saying what it is and "save it as UTF-8": UTF-32, UTF-16
 *   without a byte order mark (NUL bytes among the first ones), bytes that are not valid UTF-8
 *   (a Latin-1 file, a binary) — named by their offset and line. Nothing is decoded into U+FFFD
 *   replacement characters: a request's identity would be the hash of a text nobody sent.
 *
 * Also the size bounds of the files, checked before anything is read.
 */

/** The largest scenario (or lesson) file accepted: far above any real one (~20 KB). */
export const MAX_SCENARIO_BYTES = 5 * 1024 * 1024;
/** The largest trace file accepted (see also `LIMITS.traceChars` and the per-line bound). */
export const MAX_TRACE_BYTES = 64 * 1024 * 1024;
/** The largest request params `lab identity` reads on standard input. */
export const MAX_PARAMS_BYTES = 64 * 1024 * 1024;

export type Encoding = 'utf-8' | 'utf-16le' | 'utf-16be';

/** A size in words: "3.0 GB", "5 MB", "812 bytes" (binary units, as the limits are set). */
export function sizeText(bytes: number): string {
  const units = ['bytes', 'KB', 'MB', 'GB', 'TB'];
  let n = bytes;
  let u = 0;
  while (n >= 1024 && u < units.length - 1) {
    n /= 1024;
    u++;
  }
  if (u === 0) return `${bytes} bytes`;
  return `${Number.isInteger(n) ? n : n.toFixed(1)} ${units[u]}`;
}

/** "the trace is 3.0 GB; the limit is 64 MB", or null when within `max`. */
export function sizeRefusal(what: string, bytes: number, max: number): string | null {
  if (bytes <= max) return null;
  const [a, b] = [sizeText(bytes), sizeText(max)];
  // Just over the limit reads as the limit itself ("5.0 MB; the limit is 5 MB"): say the bytes.
  if (a.split(' ')[1] === b.split(' ')[1] && parseFloat(a) === parseFloat(b))
    return `the ${what} is ${bytes.toLocaleString('en-US')} bytes; the limit is ${b} (${max.toLocaleString('en-US')} bytes)`;
  return `the ${what} is ${a}; the limit is ${b}`;
}

const SAVE = 'save it as UTF-8';

/**
 * The encoding the first bytes of a file say, and how many bytes of byte order mark to skip; or
 * why the file is refused. `head` is at least the first 4 bytes when the file has them.
 */
export function sniffEncoding(
  head: Uint8Array
): { ok: true; encoding: Encoding; bom: number } | { ok: false; error: string } {
  const [a, b, c, d] = head;
  if ((a === 0xff && b === 0xfe && c === 0 && d === 0) || (a === 0 && b === 0 && c === 0xfe))
    return { ok: false, error: `it is UTF-32 text: ${SAVE}` };
  if (a === 0xef && b === 0xbb && c === 0xbf) return { ok: true, encoding: 'utf-8', bom: 3 };
  if (a === 0xff && b === 0xfe) return { ok: true, encoding: 'utf-16le', bom: 2 };
  if (a === 0xfe && b === 0xff) return { ok: true, encoding: 'utf-16be', bom: 2 };
  // JSON starts with ASCII: a NUL beside it is a wide encoding whose byte order mark is missing.
  const n = Math.min(head.length, 4);
  for (let i = 0; i < n; i++) {
    if (head[i] === 0)
      return {
        ok: false,
        error: `it holds NUL bytes from its start, as UTF-16 or UTF-32 text without a byte order mark does: ${SAVE}`
      };
  }
  return { ok: true, encoding: 'utf-8', bom: 0 };
}

/**
 * Where UTF-8 goes wrong, across chunks: feed it every chunk; `bad` is the offset of the first byte
 * of the first invalid sequence (overlong forms, surrogates and code points past U+10FFFF are
 * invalid, as the WHATWG decoder has them), or -1.
 */
export class Utf8Check {
  bad = -1;
  #offset = 0;
  #need = 0;
  #start = 0;
  #lo = 0x80;
  #hi = 0xbf;
  #lines = 1;
  /** The 1-based line the first invalid byte is on. */
  line = 0;

  push(bytes: Uint8Array): void {
    for (let i = 0; i < bytes.length && this.bad < 0; i++) {
      const x = bytes[i]!;
      const at = this.#offset + i;
      if (this.#need > 0) {
        if (x < this.#lo || x > this.#hi) {
          this.#fail(this.#start);
          break;
        }
        this.#lo = 0x80;
        this.#hi = 0xbf;
        this.#need--;
        continue;
      }
      if (x < 0x80) {
        if (x === 0x0a) this.#lines++;
        continue;
      }
      this.#start = at;
      if (x >= 0xc2 && x <= 0xdf) this.#need = 1;
      else if (x >= 0xe0 && x <= 0xef) {
        this.#need = 2;
        if (x === 0xe0) this.#lo = 0xa0;
        if (x === 0xed) this.#hi = 0x9f;
      } else if (x >= 0xf0 && x <= 0xf4) {
        this.#need = 3;
        if (x === 0xf0) this.#lo = 0x90;
        if (x === 0xf4) this.#hi = 0x8f;
      } else this.#fail(at);
    }
    this.#offset += bytes.length;
  }

  /** The end of the input: a sequence cut short there is invalid too. */
  end(): void {
    if (this.bad < 0 && this.#need > 0) this.#fail(this.#start);
  }

  #fail(at: number): void {
    this.bad = at;
    this.line = this.#lines;
  }
}

/** The refusal for bytes that are not UTF-8, naming where: give it every chunk of the file. */
export function notUtf8(chunks: Iterable<Uint8Array>): string {
  const check = new Utf8Check();
  for (const c of chunks) {
    check.push(c);
    if (check.bad >= 0) break;
  }
  check.end();
  const where = check.bad >= 0 ? ` at offset ${check.bad} (line ${check.line})` : '';
  return `it is not UTF-8 text: the bytes${where} are not valid UTF-8 (a Latin-1 or Windows-1252 file, or a binary?): ${SAVE}`;
}

export type Decoded = { ok: true; text: string } | { ok: false; error: string; utf8?: true };

/**
 * A streaming decoder for one file: chunks in, text out, by the rule above. The first call to
 * `push` sniffs the encoding (give it at least 4 bytes when the file has them). Bytes that are
 * not UTF-8 come back as `utf8: true`: the caller names where with {@link notUtf8} over the file
 * (this keeps no copy of what it decoded).
 */
export class TextDecodeStream {
  #decoder: TextDecoder | null = null;

  push(chunk: Uint8Array): Decoded {
    let bytes = chunk;
    if (!this.#decoder) {
      const s = sniffEncoding(bytes);
      if (!s.ok) return s;
      // ignoreBOM: the mark is skipped here, once; a second one is the text's own.
      this.#decoder = new TextDecoder(s.encoding, { fatal: true, ignoreBOM: true });
      bytes = bytes.subarray(s.bom);
    }
    return this.#decode(bytes, false);
  }

  /** The end of the file: the text of a sequence it cut short, or a refusal. */
  end(): Decoded {
    if (!this.#decoder) return { ok: true, text: '' };
    return this.#decode(new Uint8Array(0), true);
  }

  #decode(bytes: Uint8Array, last: boolean): Decoded {
    try {
      return { ok: true, text: this.#decoder!.decode(bytes, { stream: !last }) };
    } catch {
      if (this.#decoder!.encoding === 'utf-8')
        return { ok: false, error: 'it is not UTF-8 text', utf8: true };
      return { ok: false, error: `it is not valid UTF-16 text (a lone surrogate half): ${SAVE}` };
    }
  }
}

/** A whole file's bytes → its text, or why not (in words, to follow "FILE: "). */
export function decodeText(
  bytes: Uint8Array
): { ok: true; text: string } | { ok: false; error: string } {
  const d = new TextDecodeStream();
  const a = d.push(bytes);
  const b = a.ok ? d.end() : a;
  if (!a.ok || !b.ok) {
    const bad = (!a.ok ? a : b) as { error: string; utf8?: true };
    return { ok: false, error: bad.utf8 ? notUtf8([bytes]) : bad.error };
  }
  return { ok: true, text: a.text + b.text };
}
