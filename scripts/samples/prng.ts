/**
 * Seeded pseudo-random bytes for sample generation. Samples must be byte-identical on every run,
 * so nothing here may touch `Math.random` or the clock.
 */

/**
 * Deterministic PRNG (mulberry32, 32-bit state). Not cryptographic; only for reproducible junk.
 *
 * @param seed - any 32-bit integer; the same seed always yields the same sequence.
 * @returns a function giving the next unsigned 32-bit integer on each call.
 */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/**
 * `length` pseudo-random bytes from `seed` (same seed, same bytes).
 *
 * @param seed - 32-bit seed for {@link mulberry32}.
 * @param length - number of bytes (>= 0).
 */
export function seededBytes(seed: number, length: number): Uint8Array {
  const next = mulberry32(seed);
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) out[i] = next() & 0xff;
  return out;
}
