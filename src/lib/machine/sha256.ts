/**
 * SHA-256 (FIPS 180-4) of a byte array, one shot, synchronous: the hash of a request's identity.
 *
 * Why not `@noble/hashes` (which this replaced on the hot path, and which sha256.spec.ts still
 * checks it against, with node:crypto): a simulated day hashes every distinct 16 KB request, and
 * there the general streaming hasher spent its time on what a one-shot hash of a whole array does
 * not need — the state kept in object fields and written back after every 64-byte block, a
 * message schedule read as unsigned words (so sums leave V8's 32-bit integers), a method call per
 * block. Here the eight state words stay in locals for the whole message and the schedule is
 * signed: about a quarter less time on a 16 KB request (its floor: ~140 MB/s on this machine). WebCrypto's digest cannot serve: it is asynchronous, and the engine decides a request
 * in one synchronous step. The result is the same 32 bytes, for any input.
 */

// prettier-ignore
const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2
]);

/** The message schedule, reused: one hash runs at a time (JavaScript is single-threaded). */
const W = new Int32Array(64);
/** The state between blocks; the last one or two blocks (padding and length) are built here. */
const H = new Int32Array(8);
const TAIL = new Uint8Array(128);
const TAIL_VIEW = new DataView(TAIL.buffer);

/**
 * Run the compression function over the 64-byte blocks of `p` from 0 to `end`, on `H`. The
 * schedule is computed inside the rounds (word i as round i needs it); words are read big-endian
 * byte by byte, which V8 compiles to less than a DataView read per word here (measured).
 */
function blocks(p: Uint8Array, end: number): void {
  let h0 = H[0]!,
    h1 = H[1]!,
    h2 = H[2]!,
    h3 = H[3]!,
    h4 = H[4]!,
    h5 = H[5]!,
    h6 = H[6]!,
    h7 = H[7]!;
  for (let at = 0; at < end; at += 64) {
    let a = h0,
      b = h1,
      c = h2,
      d = h3,
      e = h4,
      f = h5,
      g = h6,
      h = h7;
    for (let i = 0; i < 64; i++) {
      let w: number;
      if (i < 16) {
        const j = at + i * 4;
        w = (p[j]! << 24) | (p[j + 1]! << 16) | (p[j + 2]! << 8) | p[j + 3]!;
      } else {
        const x = W[i - 15]!;
        const y = W[i - 2]!;
        const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
        const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
        w = (s1 + W[i - 7]! + s0 + W[i - 16]!) | 0;
      }
      W[i] = w;
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (h + S1 + ((e & f) ^ (~e & g)) + K[i]! + w) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
    h5 = (h5 + f) | 0;
    h6 = (h6 + g) | 0;
    h7 = (h7 + h) | 0;
  }
  H[0] = h0;
  H[1] = h1;
  H[2] = h2;
  H[3] = h3;
  H[4] = h4;
  H[5] = h5;
  H[6] = h6;
  H[7] = h7;
}

/** SHA-256 of `data`: 32 bytes. */
export function sha256(data: Uint8Array): Uint8Array {
  hashInto(data, data.length);
  const out = new Uint8Array(32);
  const view = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) view.setInt32(i * 4, H[i]!, false);
  return out;
}

/**
 * The first `bytes` bytes (a multiple of 4, at most 32) of the SHA-256 of `data[0, length)`, as
 * lower-case hex: what `bytesToHex(sha256(data.subarray(0, length)).subarray(0, bytes))` gives,
 * written from the state words without the digest, its view or a subarray (an identity per
 * request wants 16 bytes of it).
 */
export function sha256Hex(data: Uint8Array, length: number, bytes: number): string {
  hashInto(data, length);
  // A byte's two hex digits from a table: `toString(16).padStart(8, '0')` per word made two
  // strings per word and cost more than half a microsecond per identity.
  let out = '';
  for (let i = 0; i < bytes / 4; i++) {
    const w = H[i]!;
    out += HEX[w >>> 24]! + HEX[(w >>> 16) & 255]! + HEX[(w >>> 8) & 255]! + HEX[w & 255]!;
  }
  return out;
}

/** Each byte's two lower-case hex digits. */
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** Hash `data[0, n)` into `H`. */
function hashInto(data: Uint8Array, n: number): void {
  H[0] = 0x6a09e667;
  H[1] = 0xbb67ae85 | 0;
  H[2] = 0x3c6ef372;
  H[3] = 0xa54ff53a | 0;
  H[4] = 0x510e527f;
  H[5] = 0x9b05688c | 0;
  H[6] = 0x1f83d9ab;
  H[7] = 0x5be0cd19;
  const whole = n - (n % 64);
  blocks(data, whole);
  // The rest, a 1 bit, zeros, and the length in bits as a 64-bit big-endian number: one block,
  // or two when fewer than 9 bytes of the first are left.
  const rest = n - whole;
  TAIL.fill(0);
  for (let i = 0; i < rest; i++) TAIL[i] = data[whole + i]!;
  TAIL[rest] = 0x80;
  const end = rest < 56 ? 64 : 128;
  const bits = n * 8;
  TAIL_VIEW.setUint32(end - 8, Math.floor(bits / 2 ** 32), false);
  TAIL_VIEW.setUint32(end - 4, bits >>> 0, false);
  blocks(TAIL, end);
}
