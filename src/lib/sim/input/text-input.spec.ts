import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeText, sizeRefusal, TextDecodeStream, Utf8Check } from './text-input';

const bytes = (...b: number[]) => new Uint8Array(b);
const utf8 = (s: string) => new TextEncoder().encode(s);

describe('decodeText: one rule for lab and the page', () => {
  it('UTF-8 as it is; a leading byte order mark dropped, a second one kept', () => {
    expect(decodeText(utf8('{"a": "é😀"}'))).toEqual({ ok: true, text: '{"a": "é😀"}' });
    expect(decodeText(bytes(0xef, 0xbb, 0xbf, ...utf8('{}')))).toEqual({ ok: true, text: '{}' });
    expect(decodeText(bytes(0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf))).toEqual({
      ok: true,
      text: '\uFEFF'
    });
  });

  it('UTF-16 with a byte order mark, either order', () => {
    expect(decodeText(bytes(0xff, 0xfe, 0x7b, 0, 0xe9, 0, 0x7d, 0))).toEqual({
      ok: true,
      text: '{é}'
    });
    expect(decodeText(bytes(0xfe, 0xff, 0, 0x7b, 0, 0x7d))).toEqual({ ok: true, text: '{}' });
  });

  it('refuses, saying what it is: UTF-16 without a mark, UTF-32, not UTF-8 (where)', () => {
    const error = (b: Uint8Array) => {
      const r = decodeText(b);
      return r.ok ? null : r.error;
    };
    expect(error(bytes(0x7b, 0, 0x7d, 0))).toMatch(/^it holds NUL bytes from its start.*UTF-8$/);
    expect(error(bytes(0xff, 0xfe, 0, 0))).toBe('it is UTF-32 text: save it as UTF-8');
    expect(error(bytes(...utf8('{\n"a": "caf'), 0xe9, ...utf8('"}')))).toBe(
      'it is not UTF-8 text: the bytes at offset 11 (line 2) are not valid UTF-8 (a Latin-1 or Windows-1252 file, or a binary?): save it as UTF-8'
    );
    // Cut short at the end, a surrogate encoded, an overlong form: all refused, none replaced.
    expect(error(bytes(...utf8('"'), 0xe2, 0x82))).toMatch(/offset 1 \(line 1\)/);
    expect(error(bytes(...utf8('"'), 0xed, 0xa0, 0x80))).toMatch(/offset 1 \(line 1\)/);
    expect(error(bytes(...utf8('"'), 0xc0, 0xaf))).toMatch(/offset 1 \(line 1\)/);
    expect(error(bytes(0xff, 0xfe, 0x00, 0xd8, 0x7b, 0))).toMatch(/not valid UTF-16/);
  });

  it('streams across chunk boundaries as it decodes whole', () => {
    const whole = bytes(0xef, 0xbb, 0xbf, ...utf8('{"a": "é😀€"}\n'));
    // The first chunk holds at least 4 bytes (what the encoding is sniffed from).
    for (let cut = 4; cut < whole.length; cut++) {
      const d = new TextDecodeStream();
      const parts = [d.push(whole.subarray(0, cut)), d.push(whole.subarray(cut)), d.end()];
      expect(parts.map((p) => (p.ok ? p.text : '!')).join(''), `cut at ${cut}`).toBe(
        '{"a": "é😀€"}\n'
      );
    }
  });

  it('Utf8Check agrees with the WHATWG decoder on random bytes, across chunks (fixed seed)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), fc.nat(40), (b, cut) => {
        let valid = true;
        try {
          new TextDecoder('utf-8', { fatal: true }).decode(b);
        } catch {
          valid = false;
        }
        const check = new Utf8Check();
        check.push(b.subarray(0, cut));
        check.push(b.subarray(cut));
        check.end();
        expect(check.bad === -1).toBe(valid);
      }),
      { seed: 19, numRuns: 5000 }
    );
  });

  it('names sizes in binary units, as the limits are set', () => {
    expect(sizeRefusal('trace', 3 * 1024 ** 3, 64 * 1024 ** 2)).toBe(
      'the trace is 3 GB; the limit is 64 MB'
    );
    expect(sizeRefusal('scenario', 5 * 1024 ** 2 + 1, 5 * 1024 ** 2)).toBe(
      'the scenario is 5,242,881 bytes; the limit is 5 MB (5,242,880 bytes)'
    );
    expect(sizeRefusal('scenario', 5 * 1024 ** 2, 5 * 1024 ** 2)).toBeNull();
  });
});
