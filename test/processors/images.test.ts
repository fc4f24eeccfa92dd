/**
 * Image processor, field cases BR-14…BR-18, BR-21 and the format decisions of
 * docs/processors.md, on inputs generated here (no ../shared needed, except HEIC).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { afterEach, beforeAll, describe, expect, test } from "vitest";
import { fixturesDir, haveFixtures, noteIfNoFixtures } from "./support/fixtures.ts";
import { cleanupWorkDirs, processBytes, refused } from "./support/run.ts";
import { bmp24, bombPng, stackedFrames } from "./support/images.ts";

noteIfNoFixtures("images");

afterEach(cleanupWorkDirs);

describe("BR-14 decompression bomb", () => {
  test("30000×30000 1-bit PNG (~110 KB) is refused from the header: too_many_pixels with sizes", async () => {
    const bomb = bombPng(30000);
    expect(bomb.length).toBeLessThan(200_000);
    const err = await refused(processBytes(bomb, "wallpaper.png"));
    expect(err.reason).toBe("too_many_pixels");
    expect(err.params).toEqual({ width: 30000, height: 30000, megapixels: 900, limit: 50 });
    // Refused from the header, before any decode (900 MP would take seconds and gigabytes). The message
    // names that path; no wall-clock bound here (project rule: timings belong in bench/, not in tests).
    expect(err.message).toContain("header declares");
  });

  test("the limit is configurable and a 12 MP photo passes the default test limit", async () => {
    const photo = await sharp({ create: { width: 4000, height: 3000, channels: 3, background: "#336699" } }).jpeg().toBuffer();
    const ok = await processBytes(photo, "IMG_1.jpg");
    expect([ok.facts.width, ok.facts.height]).toEqual([4000, 3000]);
    const err = await refused(processBytes(photo, "IMG_1.jpg", { maxInputPixels: 10_000_000 }));
    expect(err.params).toMatchObject({ megapixels: 12, limit: 10 });
  });
});

describe("BR-15 truncated JPEG", () => {
  test("first half of an 800×600 JPEG → truncated with the header size; the next file still works", async () => {
    const full = await sharp({ create: { width: 800, height: 600, channels: 3, background: "#808080", noise: { type: "gaussian", mean: 128, sigma: 40 } } })
      .jpeg({ quality: 90 })
      .toBuffer();
    const meta = await sharp(full.subarray(0, full.length / 2)).metadata();
    expect([meta.width, meta.height]).toEqual([800, 600]); // metadata alone "succeeds" — not enough
    const err = await refused(processBytes(full.subarray(0, full.length / 2), "contract_photo.jpg"));
    expect(err.reason).toBe("truncated");
    expect(err.params).toEqual({ ext: "jpg", label: "JPEG image", size: "800×600" });
    const ok = await processBytes(full, "contract_photo.jpg");
    expect(ok.facts.width).toBe(800);
  });
});

describe("one decode with shrink-on-load (issue 12): the hostile-input rules hold when the output is smaller", () => {
  /** A 4000×3000 noisy JPEG (noise: every block carries data, so a cut loses real pixels), plain and with EXIF orientation 6. */
  let plain: Buffer;
  let rotated: Buffer;
  beforeAll(async () => {
    const img = () => sharp({ create: { width: 4000, height: 3000, channels: 3, background: "#6080a0", noise: { type: "gaussian", mean: 120, sigma: 30 } } }).jpeg({ quality: 90 });
    [plain, rotated] = await Promise.all([img().toBuffer(), img().withMetadata({ orientation: 6 }).toBuffer()]);
  });
  const photo = async (orientation?: number) => (orientation ? rotated : plain);

  test("12 MP → 2560 px: one JPEG of 2560×1920, the facts keep the input's size", async () => {
    const { facts, outputs } = await processBytes(await photo(), "IMG_2041.jpg", { maxOutputSide: 2560 });
    expect(facts).toMatchObject({ width: 4000, height: 3000, outputFormat: "jpeg", outputWidth: 2560, outputHeight: 1920 });
    const meta = await sharp(readFileSync(outputs[0]!.path)).metadata();
    expect([meta.format, meta.width, meta.height, meta.orientation]).toEqual(["jpeg", 2560, 1920, undefined]);
  });

  test("cut at 90 % and decoded at 1/4 scale (800 px out): still truncated with the header size", async () => {
    const full = await photo();
    const err = await refused(processBytes(full.subarray(0, Math.floor(full.length * 0.9)), "IMG_2042.jpg", { maxOutputSide: 800 }));
    expect([err.reason, err.params]).toEqual(["truncated", { ext: "jpg", label: "JPEG image", size: "4000×3000" }]);
  });

  test("EXIF orientation 6 with a shrunk decode: portrait 600×800 out of the 4000×3000 stored pixels", async () => {
    const { facts, outputs } = await processBytes(await photo(6), "IMG_2043.jpg", { maxOutputSide: 800 });
    expect(facts).toMatchObject({ width: 3000, height: 4000, exifOrientation: 6, outputWidth: 600, outputHeight: 800 });
    const meta = await sharp(readFileSync(outputs[0]!.path)).metadata();
    expect([meta.width, meta.height, meta.orientation]).toEqual([600, 800, undefined]);
  });
});

describe("BR-16 CMYK", () => {
  test("black CMYK JPEG → facts CMYK/4 channels, output 3-channel sRGB still near black (means < 40)", async () => {
    const cmyk = await sharp({ create: { width: 64, height: 64, channels: 3, background: "#000000" } }).toColourspace("cmyk").jpeg().toBuffer();
    expect((await sharp(cmyk).metadata()).channels).toBe(4);
    const { facts, outputs } = await processBytes(cmyk, "print_proof.jpg");
    expect(facts.space).toBe("cmyk");
    expect(facts.channels).toBe(4);
    const out = readFileSync(outputs[0]!.path);
    const meta = await sharp(out).metadata();
    expect(meta.channels).toBe(3);
    expect(meta.space).toBe("srgb");
    const { channels } = await sharp(out).stats();
    for (const c of channels) expect(c.mean).toBeLessThan(40);
  });
});

describe("BR-17 EXIF orientation", () => {
  test("300×100 stored with Orientation=6 → reported 100×300, output portrait, no Orientation tag", async () => {
    const jpg = await sharp({ create: { width: 300, height: 100, channels: 3, background: "#ff0000" } })
      .jpeg()
      .withMetadata({ orientation: 6 })
      .toBuffer();
    expect((await sharp(jpg).metadata()).orientation).toBe(6);
    const { facts, outputs } = await processBytes(jpg, "IMG_20240101.jpg");
    expect([facts.width, facts.height]).toEqual([100, 300]);
    const meta = await sharp(readFileSync(outputs[0]!.path)).metadata();
    expect([meta.width, meta.height]).toEqual([100, 300]);
    expect(meta.orientation).toBeUndefined();
    expect(meta.exif).toBeUndefined();
  });

  test("thumbnail at maxOutputSide 96 is 32×96 (portrait, not sideways)", async () => {
    const jpg = await sharp({ create: { width: 300, height: 100, channels: 3, background: "#ff0000" } })
      .jpeg()
      .withMetadata({ orientation: 6 })
      .toBuffer();
    const { facts } = await processBytes(jpg, "o.jpg", { maxOutputSide: 96 });
    expect([facts.outputWidth, facts.outputHeight]).toEqual([32, 96]);
  });

  test("metadata is stripped: GPS EXIF in, no EXIF out", async () => {
    const jpg = await sharp({ create: { width: 40, height: 30, channels: 3, background: "#00ff00" } })
      .jpeg()
      .withExif({ IFD0: { Make: "TestCam" }, IFD3: { GPSLatitudeRef: "N", GPSLatitude: "55/1 45/1 0/1" } })
      .toBuffer();
    expect((await sharp(jpg).metadata()).exif?.includes(Buffer.from("TestCam"))).toBe(true);
    const { outputs } = await processBytes(jpg, "gps.jpg");
    const out = readFileSync(outputs[0]!.path);
    expect((await sharp(out).metadata()).exif).toBeUndefined();
    expect(out.includes(Buffer.from("TestCam"))).toBe(false);
  });
});

describe("BR-18 animation and multi-page", () => {
  const colours: [number, number, number][] = [
    [255, 0, 0],
    [0, 255, 0],
    [0, 0, 255],
  ];
  const raw = { width: 64, height: 48 * 3, channels: 3 as const, pageHeight: 48 };

  test("animated GIF 64×48×3 → facts frames=3, height 48 (never 144); output is animated WebP", async () => {
    const gif = await sharp(stackedFrames(64, 48, colours), { raw }).gif({ loop: 0, delay: [200, 200, 200] }).toBuffer();
    const { facts, outputs } = await processBytes(gif, "anim.gif");
    expect(facts).toMatchObject({ width: 64, height: 48, frames: 3, outputFormat: "webp" });
    expect(outputs[0]!.mime).toBe("image/webp");
    const out = await sharp(readFileSync(outputs[0]!.path), { animated: true }).metadata();
    expect([out.format, out.pages, out.pageHeight, out.width]).toEqual(["webp", 3, 48, 64]);
  });

  test("resizing an animation resizes every frame (3 frames of 32×24 at maxOutputSide 32)", async () => {
    const gif = await sharp(stackedFrames(64, 48, colours), { raw }).gif({ loop: 0, delay: [200, 200, 200] }).toBuffer();
    const { facts, outputs } = await processBytes(gif, "anim.gif", { maxOutputSide: 32 });
    expect([facts.outputWidth, facts.outputHeight]).toEqual([32, 24]);
    const out = await sharp(readFileSync(outputs[0]!.path), { animated: true }).metadata();
    expect([out.pages, out.pageHeight, out.width, out.delay]).toEqual([3, 24, 32, [200, 200, 200]]);
  });

  test("animated WebP stays animated", async () => {
    const webp = await sharp(stackedFrames(64, 48, colours), { raw }).webp({ loop: 0, delay: [100, 100, 100] }).toBuffer();
    const { facts, outputs } = await processBytes(webp, "anim.webp");
    expect(facts).toMatchObject({ width: 64, height: 48, frames: 3 });
    expect((await sharp(readFileSync(outputs[0]!.path), { animated: true }).metadata()).pages).toBe(3);
  });

  test("multi-page TIFF → frames=3, output is page 1 only (framesOutput 1)", async () => {
    const tif = await sharp(stackedFrames(64, 48, colours), { raw }).tiff().toBuffer();
    expect((await sharp(tif).metadata()).pages).toBe(3);
    const { facts, outputs } = await processBytes(tif, "fax.tif");
    expect(facts).toMatchObject({ width: 64, height: 48, frames: 3, framesOutput: 1, outputFormat: "jpeg" });
    const { channels } = await sharp(readFileSync(outputs[0]!.path)).stats();
    expect(channels[0]!.mean).toBeGreaterThan(200); // page 1 is red
    expect(channels[1]!.mean).toBeLessThan(40);
  });
});

describe("formats and outputs", () => {
  test("BMP 24-bit (sharp has no BMP loader) → decoded by bmp-ts, colours and orientation right", async () => {
    const bmp = bmp24(200, 150, (x, y) => (y < 75 ? (x < 100 ? [255, 0, 0] : [0, 0, 255]) : [0, 255, 0]));
    const { facts, outputs } = await processBytes(bmp, "scan.bmp");
    expect(facts).toMatchObject({ type: "image/bmp", width: 200, height: 150 });
    const { data, info } = await sharp(readFileSync(outputs[0]!.path)).raw().toBuffer({ resolveWithObject: true });
    const px = (x: number, y: number): number[] => [...data.subarray((y * info.width + x) * 3, (y * info.width + x) * 3 + 3)];
    const near = (got: number[], want: number[]): void => got.forEach((v, i) => expect(Math.abs(v - want[i]!)).toBeLessThan(40));
    near(px(20, 20), [255, 0, 0]);
    near(px(180, 20), [0, 0, 255]);
    near(px(100, 130), [0, 255, 0]);
  });

  test("BMP whose header is over the pixel limit is refused before decoding", async () => {
    const header = bmp24(1, 1, () => [0, 0, 0]);
    header.writeInt32LE(20000, 18);
    header.writeInt32LE(20000, 22);
    const err = await refused(processBytes(header, "huge.bmp"));
    expect(err.reason).toBe("too_many_pixels");
  });

  test("alpha → WebP with alpha kept; palette → lossless WebP (issue 5 §4: output WebP or JPEG)", async () => {
    const rgba = await sharp({ create: { width: 32, height: 32, channels: 4, background: { r: 0, g: 128, b: 128, alpha: 0.5 } } }).png().toBuffer();
    const a = await processBytes(rgba, "stamp.png");
    expect(a.outputs[0]!.mime).toBe("image/webp");
    const am = await sharp(readFileSync(a.outputs[0]!.path)).metadata();
    expect([am.format, am.hasAlpha]).toEqual(["webp", true]);
    const pal = await sharp({ create: { width: 40, height: 30, channels: 3, background: "#123456" } }).png({ palette: true, colours: 16 }).toBuffer();
    const p = await processBytes(pal, "logo.png");
    expect(p.facts.palette).toBe(true);
    expect(p.outputs[0]!.mime).toBe("image/webp");
    expect(p.outputs[0]!.fileName).toMatch(/\.webp$/);
  });

  test("16-bit PNG → 8-bit sRGB output", async () => {
    const png16 = await sharp({ create: { width: 32, height: 24, channels: 3, background: "#804020" } }).toColourspace("rgb16").png().toBuffer();
    const { facts, outputs } = await processBytes(png16, "gradient.png");
    expect(facts.depth).toBe("ushort");
    const m = await sharp(readFileSync(outputs[0]!.path)).metadata();
    expect([m.depth, m.space]).toEqual(["uchar", "srgb"]);
  });

  test("longest side is capped at maxOutputSide", async () => {
    const wide = await sharp({ create: { width: 3000, height: 1000, channels: 3, background: "#ffffff" } }).jpeg().toBuffer();
    const { facts } = await processBytes(wide, "wide.jpg", { maxOutputSide: 1000 });
    expect([facts.width, facts.outputWidth, facts.outputHeight]).toEqual([3000, 1000, 333]);
  });

  test("AVIF decodes (ok)", async () => {
    const avif = await sharp({ create: { width: 64, height: 48, channels: 3, background: "#aa5500" } }).avif().toBuffer();
    const { facts } = await processBytes(avif, "photo.avif");
    expect(facts).toMatchObject({ type: "image/avif", width: 64, height: 48 });
  });

  test("SVG with an external entity → unsupported_type, never rendered", async () => {
    const svg = `<?xml version="1.0"?>\n<!DOCTYPE svg [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><text>&xxe;</text></svg>\n`;
    const err = await refused(processBytes(Buffer.from(svg), "logo.svg"));
    expect(err.reason).toBe("unsupported_type");
    expect(err.params).toEqual({ ext: "svg", label: "SVG image" });
  });

  test.skipIf(!haveFixtures)("BR-21 HEIC (shared fixture): header reads, decode fails → unsupported_type with its size", async () => {
    const err = await refused(processBytes(readFileSync(join(fixturesDir, "img_photo.heic")), "IMG_0420.HEIC"));
    expect(err.reason).toBe("unsupported_type");
    expect(err.params).toMatchObject({ ext: "heic", width: 512, height: 384 });
  });
});
