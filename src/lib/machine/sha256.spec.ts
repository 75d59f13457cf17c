import { createHash } from 'node:crypto';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sha256, sha256Hex, sha256Rounds } from './sha256';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const reference = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

describe('sha256 (the identity hash) against node:crypto and @noble/hashes', () => {
  it('gives the FIPS 180-4 digests of the standard test messages', () => {
    const utf8 = (s: string) => new TextEncoder().encode(s);
    expect(hex(sha256(utf8('')))).toBe(
      'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'
    );
    expect(hex(sha256(utf8('abc')))).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
    );
    expect(hex(sha256(utf8('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')))).toBe(
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1'
    );
  });

  it('agrees on every length around the padding boundaries (55/56, 63/64, 119/120 bytes)', () => {
    for (let n = 0; n <= 200; n++) {
      const data = Uint8Array.from({ length: n }, (_, i) => (i * 131 + n) & 0xff);
      expect(hex(sha256(data))).toBe(reference(data));
    }
  });

  it('sha256Hex: the first bytes of the digest in hex, over the first `length` bytes of a buffer', () => {
    for (let n = 0; n <= 200; n++) {
      const data = Uint8Array.from({ length: n }, (_, i) => (i * 131 + n) & 0xff);
      // The identity's way: a larger reused buffer holding other bytes past `n`.
      const buffer = new Uint8Array(n + 70).fill(0x5a);
      buffer.set(data);
      for (const bytes of [4, 16, 32])
        expect(sha256Hex(buffer, n, bytes)).toBe(reference(data).slice(0, bytes * 2));
    }
  });

  it('agrees on arbitrary bytes, including a view into a larger buffer', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), fc.nat({ max: 7 }), (bytes, offset) => {
        const backing = new Uint8Array(bytes.length + offset + 5).fill(0xa5);
        backing.set(bytes, offset);
        const view = backing.subarray(offset, offset + bytes.length);
        expect(hex(sha256(view))).toBe(reference(bytes));
        expect(hex(sha256(view))).toBe(hex(nobleSha256(bytes)));
      }),
      { numRuns: 1_000 }
    );
  });

  it('agrees on a padded request (16 KB) and on a megabyte', () => {
    for (const n of [16_384 + 37, 1 << 20]) {
      const data = Uint8Array.from({ length: n }, (_, i) => (i * 7919) & 0xff);
      expect(hex(sha256(data))).toBe(reference(data));
    }
  });

  // The tests above hash with the compact loop; past 16 MiB hashed, the written-out rounds take
  // over (sha256.ts `UNROLLED_AFTER`): the same digests from both.
  it('agrees past the switch to the written-out rounds: 17 MiB, then every length and arbitrary bytes', async () => {
    expect(sha256Rounds().rounds).toBe('loop');
    const big = Uint8Array.from({ length: 17 * 2 ** 20 }, (_, i) => (i * 31 + (i >>> 12)) & 0xff);
    expect(hex(sha256(big))).toBe(reference(big));
    // Past 16 MiB the written-out rounds are fetched (their own module, not in the first load),
    // and hash everything after they arrive.
    await sha256Rounds().ready;
    expect(sha256Rounds().rounds).toBe('written-out');
    expect(hex(sha256(big))).toBe(reference(big));
    for (let n = 0; n <= 200; n++) {
      const data = Uint8Array.from({ length: n }, (_, i) => (i * 131 + n) & 0xff);
      expect(hex(sha256(data))).toBe(reference(data));
    }
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2_000 }), (bytes) => {
        expect(hex(sha256(bytes))).toBe(reference(bytes));
      }),
      { numRuns: 300 }
    );
  });
});
