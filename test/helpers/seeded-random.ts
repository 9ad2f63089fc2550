// Deterministic dice for randomized tests, so a failure reproduces from its seed.
//
// mulberry32: 32-bit integer arithmetic (Math.imul), so no precision is lost. The textbook LCG
// `seed * 1103515245 + 12345` overflows 2^53 in a JS number: its low bits come out zero, and
// `rand() % k` then hits only a few values (one test drew almost only 5 of its 20 operations).

/** A number in [0, 1) per call. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An integer in [0, k) per call. */
export function seededInt(seed: number): (k: number) => number {
  const next = seededRandom(seed);
  return (k) => Math.floor(next() * k);
}
