/** bot/intake/refused-albums.ts: one refusal per album, for `keepMs` after it, with a fake clock. */
import { describe, expect, test } from "vitest";
import { RefusedAlbums } from "../../bot/intake/refused-albums.ts";

describe("RefusedAlbums", () => {
  test("a refused album covers its later parts for keepMs, per chat and album; older entries are dropped", () => {
    const r = new RefusedAlbums(1000);
    expect(r.has("42:album:A", 0)).toBe(false);
    r.remember("42:album:A", 100);
    expect(r.has("42:album:A", 100)).toBe(true);
    expect(r.has("42:album:A", 1099)).toBe(true);
    expect(r.has("42:album:A", 1100)).toBe(false);
    expect(r.has("43:album:A", 500)).toBe(false);
    expect(r.has("42:album:B", 500)).toBe(false);
    r.remember("42:album:B", 2000); // drops A (refused 1900 ms before)
    expect(r.has("42:album:A", 100)).toBe(false);
    expect(r.has("42:album:B", 2500)).toBe(true);
  });
});
