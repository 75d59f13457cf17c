/**
 * SHA-256 (FIPS 180-4) of a byte array, one shot, synchronous: the hash of a request's identity.
 *
 * Why not `@noble/hashes` (which this replaced on the hot path, and which sha256.spec.ts still
 * checks it against, with node:crypto): a simulated day hashes every distinct 16 KB request, and
 * there the general streaming hasher spent its time on what a one-shot hash of a whole array does
 * not need — the state kept in object fields and written back after every 64-byte block, a
 * message schedule read as unsigned words (so sums leave V8's 32-bit integers), a method call per
 * block. Here the eight state words stay in locals for the whole message and the schedule is
 * signed, and the 64 rounds are written out (sha256-rounds.ts): about half the time of the
 * streaming hasher on a 16 KB request. A run starts with the same rounds as a loop
 * (`compactBlocks`), which V8 optimises in a twentieth of the time and which is a fraction of the
 * size, and moves to the written-out ones once it has hashed enough to repay fetching and
 * compiling them (they are imported then, not in the page's first load). WebCrypto's digest
 * cannot serve: it is asynchronous, and the engine decides a request in one synchronous step.
 * The result is the same 32 bytes, for any input.
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

/** The state between blocks; the last one or two blocks (padding and length) are built here. */
const H = new Int32Array(8);
const TAIL = new Uint8Array(128);
const TAIL_VIEW = new DataView(TAIL.buffer);

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

/** The message schedule of {@link compactBlocks}. */
const W = new Int32Array(64);

/**
 * The written-out rounds (sha256-rounds.ts) as a loop of 64 rounds over a schedule array: the same digest, about three
 * quarters of the speed once optimised — but a small function, where the written-out one is the
 * largest the engine has: V8's optimising compiler took ~60 ms of CPU over it (measured with
 * `--trace-opt` on the 50-server benchmark, a tenth of all the optimising it did in half an hour),
 * paid early in every run, while a run whose identities are memoised (fast-identity.ts) hashes a
 * few megabytes in all. So hashing starts here and moves to the written-out rounds once it has hashed
 * {@link UNROLLED_AFTER} bytes: a run that hashes a lot (a day of distinct 16 KB requests) still
 * gets the faster one.
 */
function compactBlocks(p: Uint8Array, end: number): void {
  let h0 = H[0]!,
    h1 = H[1]!,
    h2 = H[2]!,
    h3 = H[3]!,
    h4 = H[4]!,
    h5 = H[5]!,
    h6 = H[6]!,
    h7 = H[7]!;
  const w = W;
  for (let at = 0; at < end; at += 64) {
    for (let i = 0; i < 16; i++) {
      const j = at + i * 4;
      w[i] = (p[j]! << 24) | (p[j + 1]! << 16) | (p[j + 2]! << 8) | p[j + 3]!;
    }
    for (let i = 16; i < 64; i++) {
      const x = w[i - 15]!;
      const y = w[i - 2]!;
      const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
      const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
      w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) | 0;
    }
    let a = h0,
      b = h1,
      c = h2,
      d = h3,
      e = h4,
      f = h5,
      g = h6,
      h = h7;
    for (let i = 0; i < 64; i++) {
      const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (h + s1 + ((e & f) ^ (~e & g)) + K[i]! + w[i]!) | 0;
      const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (s0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
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

/** Bytes hashed by {@link compactBlocks} before the written-out rounds are fetched: 16 MiB. */
const UNROLLED_AFTER = 16 * 2 ** 20;
let hashedBytes = 0;
type Rounds = (h: Int32Array, k: Int32Array, p: Uint8Array, end: number) => void;
/** The written-out rounds, once imported. */
let writtenOut: Rounds | null = null;
/** Their import, once asked for (a failed fetch leaves the loop in use: same digests, slower). */
let importing: Promise<void> | null = null;

function importWrittenOut(): Promise<void> {
  importing ??= import('./sha256-rounds').then(
    (m) => {
      writtenOut = m.blocks;
    },
    () => {}
  );
  return importing;
}

/**
 * Which rounds hash now, and a promise settled once the written-out ones are in use (or could not
 * be fetched): for the spec that checks both give the same digests, and for benchmarks that want
 * the steady state from the start.
 */
export function sha256Rounds(load = false): {
  rounds: 'loop' | 'written-out';
  ready: Promise<void>;
} {
  return {
    rounds: writtenOut ? 'written-out' : 'loop',
    ready: load ? importWrittenOut() : (importing ?? Promise.resolve())
  };
}

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
  hashedBytes += n;
  if (hashedBytes >= UNROLLED_AFTER && importing === null) void importWrittenOut();
  const rounds = writtenOut;
  if (rounds) rounds(H, K, data, whole);
  else compactBlocks(data, whole);
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
  if (rounds) rounds(H, K, TAIL, end);
  else compactBlocks(TAIL, end);
}
