/**
 * A strict JSON scanner that knows where everything is: what the policy editor needs to underline
 * an error at its place in the text, the same in every engine.
 */
import { describeChar } from '../excerpt';
import { pathKey, type PathSegment } from './path';

/** A place in the text: 1-based lines and columns, columns in UTF-16 units as the editor counts. */
export interface TextRange {
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
}

export interface Span {
  start: number;
  end: number;
}
export interface Located {
  value: Span;
  /** The member name's span, when the value is an object member. */
  key?: Span;
}

export class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly at: number
  ) {
    super(message);
  }
}

/** Deeper than any policy needs; bounded so a hostile paste cannot overflow the stack. */
const MAX_DEPTH = 256;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/**
 * A strict RFC 8259 scanner run over policy text before `JSON.parse`. `JSON.parse` reports syntax
 * errors differently in every engine (Safari gives no position at all), says nothing about
 * duplicate member names (it silently keeps the last — a policy that means something other than
 * what its author sees), and forgets where each value was. This scanner gives the same message and
 * line/column everywhere, flags duplicates, and records the span of every value and member name
 * by path so a schema error can be underlined in the editor.
 */
export class JsonScanner {
  private i = 0;
  private depth = 0;
  readonly locations = new Map<string, Located>();
  readonly duplicates: { segments: PathSegment[]; key: Span }[] = [];

  /** `locate: false` skips recording places: a syntax check of a long text needs none. */
  constructor(
    private readonly text: string,
    private readonly locate = true
  ) {}

  scan(): void {
    this.ws();
    if (this.i >= this.text.length) this.fail('the text is empty: expected a JSON object');
    this.value([]);
    this.ws();
    if (this.i < this.text.length) this.fail('unexpected text after the end of the JSON value');
  }

  private fail(message: string, at = this.i): never {
    throw new JsonSyntaxError(message, at);
  }

  private ws(): void {
    const t = this.text;
    while (this.i < t.length) {
      const c = t.charCodeAt(this.i);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) this.i++;
      else break;
    }
  }

  private describeHere(): string {
    const c = this.text.codePointAt(this.i);
    if (c === undefined) return 'the end of the text';
    return describeChar(String.fromCodePoint(c));
  }

  /** Fail at the current character, recognising the usual non-JSON habits by name. */
  private unexpected(expected: string): never {
    const c = this.text[this.i];
    if (c === "'") this.fail('strings and member names use double quotes, not single quotes');
    if (c === '/') this.fail('JSON has no comments');
    this.fail(`unexpected ${this.describeHere()}: expected ${expected}`);
  }

  private value(path: PathSegment[]): void {
    this.ws();
    const start = this.i;
    const c = this.text[this.i];
    if (c === undefined) this.fail('unexpected end of the text: expected a value');
    if (c === '{') this.object(path);
    else if (c === '[') this.array(path);
    else if (c === '"') this.string();
    else if (c === '-' || (c >= '0' && c <= '9')) this.number();
    else if (!(this.literal('true') || this.literal('false') || this.literal('null'))) {
      this.unexpected('a value');
    }
    if (this.locate) this.locations.set(pathKey(path), { value: { start, end: this.i } });
  }

  private literal(word: string): boolean {
    if (!this.text.startsWith(word, this.i)) return false;
    this.i += word.length;
    return true;
  }

  private enter(): void {
    if (++this.depth > MAX_DEPTH) this.fail(`nested deeper than ${MAX_DEPTH} levels`);
  }

  private object(path: PathSegment[]): void {
    const open = this.i;
    this.enter();
    this.i++;
    this.ws();
    const seen = new Set<string>();
    const keys: { key: string; span: Span }[] = [];
    if (this.text[this.i] === '}') {
      this.i++;
      this.depth--;
      return;
    }
    for (;;) {
      this.ws();
      if (this.i >= this.text.length) this.unclosed('object', open);
      if (this.text[this.i] !== '"') {
        if (this.text[this.i] === '}' && keys.length > 0) this.fail("trailing comma before '}'");
        this.unexpected('a member name in double quotes');
      }
      const keyStart = this.i;
      this.string();
      const span = { start: keyStart, end: this.i };
      const key = JSON.parse(this.text.slice(keyStart, this.i)) as string;
      if (seen.has(key)) this.duplicates.push({ segments: [...path, key], key: span });
      seen.add(key);
      keys.push({ key, span });
      this.ws();
      if (this.text[this.i] !== ':') this.unexpected("':' after the member name");
      this.i++;
      this.value([...path, key]);
      const loc = this.locate ? this.locations.get(pathKey([...path, key])) : undefined;
      if (loc) loc.key = span;
      this.ws();
      const c = this.text[this.i];
      if (c === ',') {
        this.i++;
        continue;
      }
      if (c === '}') {
        this.i++;
        break;
      }
      if (c === undefined) this.unclosed('object', open);
      this.unexpected("',' or '}' after a member");
    }
    this.depth--;
  }

  private array(path: PathSegment[]): void {
    const open = this.i;
    this.enter();
    this.i++;
    this.ws();
    if (this.text[this.i] === ']') {
      this.i++;
      this.depth--;
      return;
    }
    for (let index = 0; ; index++) {
      this.ws();
      if (this.text[this.i] === ']' && index > 0) this.fail("trailing comma before ']'");
      if (this.i >= this.text.length) this.unclosed('array', open);
      this.value([...path, index]);
      this.ws();
      const c = this.text[this.i];
      if (c === ',') {
        this.i++;
        continue;
      }
      if (c === ']') {
        this.i++;
        break;
      }
      if (c === undefined) this.unclosed('array', open);
      this.unexpected("',' or ']' after an element");
    }
    this.depth--;
  }

  private unclosed(what: 'object' | 'array', open: number): never {
    const { line, column } = lineColumn(this.text, open);
    this.fail(
      `unexpected end of the text: the ${what} opened at line ${line}, column ${column} is not closed`
    );
  }

  private string(): void {
    const t = this.text;
    const start = this.i;
    this.i++;
    for (;;) {
      if (this.i >= t.length) this.fail('unterminated string', start);
      const c = t.charCodeAt(this.i);
      if (c === 0x22) {
        this.i++;
        return;
      }
      if (c < 0x20)
        this.fail('a control character (such as a line break) inside a string must be escaped');
      if (c === 0x5c) {
        const e = t[this.i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(t.slice(this.i + 2, this.i + 6))) {
            this.fail('\\u must be followed by four hex digits');
          }
          this.i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) this.i += 2;
        else if (e === undefined) this.fail('unterminated string', start);
        else this.fail(`invalid escape: a backslash before ${describeChar(e)}`);
      } else this.i++;
    }
  }

  private number(): void {
    const start = this.i;
    NUMBER.lastIndex = start;
    const m = NUMBER.exec(this.text);
    const next = m ? this.text[start + m[0].length] : undefined;
    if (!m || (next !== undefined && /[0-9.eE+-]/.test(next))) {
      this.fail(
        'invalid number (no leading zeros; digits after a sign, a point or an exponent)',
        start
      );
    }
    this.i += m[0].length;
  }
}

/** 1-based line and column (UTF-16 units) of an offset; \r\n, \r and \n each end a line. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x0a || (c === 0x0d && text.charCodeAt(i + 1) !== 0x0a)) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

export function spanPosition(text: string, span: Span): TextRange {
  const a = lineColumn(text, span.start);
  const b = lineColumn(text, span.end);
  return { line: a.line, column: a.column, endLine: b.line, endColumn: b.column };
}
