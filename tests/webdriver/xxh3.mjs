//! XXH3-64 (seed 0) of inputs up to 128 bytes, as the app stamps a file an agent read
//! (`canopy_tools::stamp`, the xxhash-rust crate): enough for a test to write a trace whose read
//! stamp matches a small project file, so that editing the file afterwards makes the citation stale.
//! Longer inputs are refused rather than hashed wrongly.

const M = (1n << 64n) - 1n;
const SECRET = Buffer.from(
  'b8fe6c3923a44bbe7c01812cf721ad1cded46de9839097db7240a4a4b7b3671fcb79e64eccc0e578825ad07dccff7221b8084674f743248ee03590e6813a264c3c2852bb91c300cb88d0658b1b532ea371644897a20df94e3819ef46a9deacd8a8fa763fe39c343ff9dcbbc7c70b4f1d8a51e04bcdb45931c89f7ec9d9787364',
  'hex',
);
const PRIME64_1 = 0x9e3779b185ebca87n;
const PRIME64_2 = 0xc2b2ae3d27d4eb4fn;
const PRIME64_3 = 0x165667b19e3779f9n;

const r64 = (b, at) => b.readBigUInt64LE(at);
const r32 = (b, at) => BigInt(b.readUInt32LE(at));
const mul = (a, b) => (a * b) & M;
const add = (a, b) => (a + b) & M;
const rotl = (v, n) => ((v << BigInt(n)) | (v >> BigInt(64 - n))) & M;
const swap64 = (v) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(v);
  return b.readBigUInt64BE(0);
};
const fold = (a, b) => {
  const p = a * b;
  return (p & M) ^ (p >> 64n);
};
const xxh64Avalanche = (h) => {
  h ^= h >> 33n;
  h = mul(h, PRIME64_2);
  h ^= h >> 29n;
  h = mul(h, PRIME64_3);
  return h ^ (h >> 32n);
};
const avalanche = (h) => {
  h ^= h >> 37n;
  h = mul(h, 0x165667919e3779f9n);
  return h ^ (h >> 32n);
};
const strongAvalanche = (h, len) => {
  h ^= rotl(h, 49) ^ rotl(h, 24);
  h = mul(h, 0x9fb21c651e98df25n);
  h ^= add(h >> 35n, BigInt(len));
  h = mul(h, 0x9fb21c651e98df25n);
  return h ^ (h >> 28n);
};
const mix16 = (b, at, s) => fold(r64(b, at) ^ r64(SECRET, s), r64(b, at + 8) ^ r64(SECRET, s + 8));

/** XXH3-64 of `bytes` (a Buffer of at most 128 bytes) as 16 lower-case hex digits. */
export function xxh3hex(bytes) {
  const n = bytes.length;
  let h;
  if (n === 0) h = xxh64Avalanche(r64(SECRET, 56) ^ r64(SECRET, 64));
  else if (n <= 3) {
    const combo = ((bytes[0] << 16) | (bytes[n >> 1] << 24) | bytes[n - 1] | (n << 8)) >>> 0;
    h = xxh64Avalanche(BigInt(combo) ^ (r32(SECRET, 0) ^ r32(SECRET, 4)));
  } else if (n <= 8) {
    const input64 = add(r32(bytes, n - 4), r32(bytes, 0) << 32n);
    h = strongAvalanche(input64 ^ (r64(SECRET, 8) ^ r64(SECRET, 16)), n);
  } else if (n <= 16) {
    const lo = r64(bytes, 0) ^ (r64(SECRET, 24) ^ r64(SECRET, 32));
    const hi = r64(bytes, n - 8) ^ (r64(SECRET, 40) ^ r64(SECRET, 48));
    h = avalanche(add(add(add(BigInt(n), swap64(lo)), hi), fold(lo, hi)));
  } else if (n <= 128) {
    let acc = mul(BigInt(n), PRIME64_1);
    if (n > 32) {
      if (n > 64) {
        if (n > 96) {
          acc = add(acc, mix16(bytes, 48, 96));
          acc = add(acc, mix16(bytes, n - 64, 112));
        }
        acc = add(acc, mix16(bytes, 32, 64));
        acc = add(acc, mix16(bytes, n - 48, 80));
      }
      acc = add(acc, mix16(bytes, 16, 32));
      acc = add(acc, mix16(bytes, n - 32, 48));
    }
    acc = add(acc, mix16(bytes, 0, 0));
    acc = add(acc, mix16(bytes, n - 16, 16));
    h = avalanche(acc);
  } else {
    throw new Error(`xxh3hex hashes at most 128 bytes (got ${n}): keep the test's stamped files small`);
  }
  return h.toString(16).padStart(16, '0');
}

/** The stamp the app records for a whole file it read (`FileStamp`). */
export function stampOf(bytes) {
  return { bytes: bytes.length, whole: true, hash: xxh3hex(bytes) };
}
