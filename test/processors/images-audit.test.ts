/**
 * Detection and image gaps from the audit of issue 5, on inputs made here by
 * scripts/samples/ generators: `%PDF-` inside another type (gap 3), APNG (gap 5), frame cap
 * (gap 6), WebP instead of PNG outputs (gap 7), cut-short PNG/GIF/WebP (gap 10).
 */
import { readFileSync } from "node:fs";
import sharp from "sharp";
import { afterEach, describe, expect, test } from "vitest";
import { detectFile } from "../../processors/detect.ts";
import { DEFAULT_MAX_FRAMES } from "../../processors/image/process-image.ts";
import { makeAnimated, makeApng, makePdf, makePng, makePngWithText, makeStoredZip, makeTinyFrameGif, prependJunk, truncate } from "../../scripts/samples/index.ts";
import { cleanupWorkDirs, processBytes, refused, writeInput } from "./support/run.ts";

afterEach(cleanupWorkDirs);

describe("gap 3: %PDF- inside another real type", () => {
  test("a PNG whose tEXt chunk says %PDF-1.4 is a PNG (ok, 64×64), not a broken PDF", async () => {
    const png = makePngWithText("see %PDF-1.4 spec");
    expect(Buffer.from(png).indexOf("%PDF-")).toBeGreaterThan(0);
    expect((await detectFile(writeInput(png).path)).mime).toBe("image/png");
    const { facts } = await processBytes(png, "scan.png");
    expect(facts).toMatchObject({ type: "image/png", width: 64, height: 64 });
  });

  test("a stored ZIP (zip -0) of a PDF is a ZIP archive → unsupported_type {zip}", async () => {
    const zip = makeStoredZip("report.pdf", makePdf({ pages: [["Zipped report"]] }));
    expect(Buffer.from(zip).indexOf("%PDF-")).toBeLessThan(1024);
    const err = await refused(processBytes(zip, "archive.zip"));
    expect(err.reason).toBe("unsupported_type");
    expect(err.params).toEqual({ ext: "zip", label: "ZIP archive" });
  });

  test("junk before the header (BR-21) is still a PDF; %PDF- at byte 0 always is", async () => {
    const pdf = makePdf({ pages: [["Quote Q-2291"]] });
    expect((await detectFile(writeInput(prependJunk(pdf, 512)).path)).mime).toBe("application/pdf");
    expect((await detectFile(writeInput(pdf).path)).mime).toBe("application/pdf");
  });
});

describe("gap 5: APNG is a PNG, its animation kept as animated WebP (like GIF/WebP)", () => {
  test("3-frame 64×64 APNG → ok, PNG image, frames=3, animated WebP whose frames are red, lime, blue", async () => {
    const { facts, outputs } = await processBytes(makeApng(64, 64), "sticker.png");
    expect(facts).toMatchObject({ type: "image/apng", label: "PNG image", width: 64, height: 64, frames: 3, outputFormat: "webp" });
    expect(facts.mismatchInfo).toBeUndefined();
    const out = readFileSync(outputs[0]!.path);
    const meta = await sharp(out, { animated: true }).metadata();
    expect([meta.format, meta.pages, meta.pageHeight, meta.width, meta.delay]).toEqual(["webp", 3, 64, 64, [200, 200, 200]]);
    const want = [
      [255, 0, 0],
      [0, 255, 0],
      [0, 0, 255],
    ];
    for (const [page, rgb] of want.entries()) {
      const px = await sharp(out, { page }).removeAlpha().raw().toBuffer();
      [...px.subarray(0, 3)].forEach((v, c) => expect(Math.abs(v - rgb[c]!)).toBeLessThan(12));
    }
  });

  test("downscaled (maxOutputSide 32): frames resized as raw pixels, still 3 frames of 32×32 with their delays and colours", async () => {
    const { facts, outputs } = await processBytes(makeApng(64, 64), "sticker.png", { maxOutputSide: 32 });
    expect(facts).toMatchObject({ width: 64, height: 64, frames: 3, outputFormat: "webp", outputWidth: 32, outputHeight: 32 });
    const out = readFileSync(outputs[0]!.path);
    const meta = await sharp(out, { animated: true }).metadata();
    expect([meta.pages, meta.pageHeight, meta.width, meta.delay]).toEqual([3, 32, 32, [200, 200, 200]]);
    for (const [page, rgb] of [[255, 0, 0], [0, 255, 0], [0, 0, 255]].entries()) {
      const px = await sharp(out, { page }).removeAlpha().raw().toBuffer();
      [...px.subarray(0, 3)].forEach((v, c) => expect(Math.abs(v - rgb[c]!)).toBeLessThan(12));
    }
  });

  test("partial frames and dispose 'previous' are composed: frame 2 = red + lime square, frame 3 = red + blue corner", async () => {
    const apng = makeApng(64, 64, [[255, 0, 0], [0, 255, 0], [0, 0, 255]], 100, [null, { x: 16, y: 16, width: 16, height: 16, dispose: 2 }, { x: 0, y: 0, width: 8, height: 8 }]);
    const { facts, outputs } = await processBytes(apng, "sticker.png");
    expect(facts.frames).toBe(3);
    const out = readFileSync(outputs[0]!.path);
    const at = async (page: number, x: number, y: number): Promise<number[]> => {
      const px = await sharp(out, { page }).removeAlpha().raw().toBuffer();
      return [...px.subarray((y * 64 + x) * 3, (y * 64 + x) * 3 + 3)];
    };
    const near = (got: number[], want: number[]): void => got.forEach((v, c) => expect(Math.abs(v - want[c]!)).toBeLessThan(12));
    near(await at(1, 20, 20), [0, 255, 0]);
    near(await at(1, 2, 2), [255, 0, 0]);
    near(await at(2, 20, 20), [255, 0, 0]); // lime square disposed back to frame 1
    near(await at(2, 2, 2), [0, 0, 255]);
  });
});

describe("gap 6: frame cap from the header", () => {
  test(`5000 frames of 1×1 (over the default ${DEFAULT_MAX_FRAMES}) → frame 1 only, facts say why`, async () => {
    const { facts, outputs } = await processBytes(makeTinyFrameGif(5000), "meme.gif");
    expect(facts).toMatchObject({ frames: 5000, framesOutput: 1, framesLimit: DEFAULT_MAX_FRAMES, width: 1, height: 1 });
    expect((await sharp(readFileSync(outputs[0]!.path), { animated: true }).metadata()).pages ?? 1).toBe(1);
  });

  test("maxFrames is an option: 5 frames with maxFrames 4 → frame 1; with 5 → all 5 kept", async () => {
    const gif = makeTinyFrameGif(5);
    expect((await processBytes(gif, "a.gif", { maxFrames: 4 })).facts).toMatchObject({ frames: 5, framesOutput: 1, framesLimit: 4 });
    const all = await processBytes(gif, "a.gif", { maxFrames: 5 });
    expect(all.facts.framesOutput).toBeUndefined();
    expect((await sharp(readFileSync(all.outputs[0]!.path), { animated: true }).metadata()).pages).toBe(5);
  });
});

describe("gap 7: outputs are WebP or JPEG, never PNG", () => {
  test("palette PNG → lossless WebP with exactly the same pixels", async () => {
    const pal = await sharp({ create: { width: 40, height: 30, channels: 3, background: "#123456" } })
      .composite([{ input: { create: { width: 10, height: 10, channels: 3, background: "#f0a000" } }, left: 5, top: 5 }])
      .png({ palette: true, colours: 16 })
      .toBuffer();
    const { facts, outputs } = await processBytes(pal, "logo.png");
    expect(facts).toMatchObject({ palette: true, outputFormat: "webp" });
    expect(outputs[0]!.mime).toBe("image/webp");
    const a = await sharp(pal).removeAlpha().raw().toBuffer();
    const b = await sharp(readFileSync(outputs[0]!.path)).removeAlpha().raw().toBuffer();
    expect(b.equals(a)).toBe(true);
  });

  test("RGBA PNG → WebP with alpha kept (transparent stays 0, half-transparent stays ≈128)", async () => {
    const rgba = await makePng(32, 32, { alpha: true });
    const { outputs } = await processBytes(rgba, "stamp.png");
    expect(outputs[0]!.mime).toBe("image/webp");
    const src = await sharp(rgba).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    const out = await sharp(readFileSync(outputs[0]!.path)).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    expect(out.info.channels).toBe(4);
    for (let i = 3; i < src.data.length; i += 4) expect(Math.abs(out.data[i]! - src.data[i]!)).toBeLessThanOrEqual(2);
  });
});

describe("gap 10: cut-short PNG, GIF, WebP are truncated (with the declared size)", () => {
  test("PNG without IEND → truncated {png, 320×240}", async () => {
    const png = await makePng(320, 240);
    const err = await refused(processBytes(truncate(png, 0.5), "photo.png"));
    expect(err.reason).toBe("truncated");
    expect(err.params).toEqual({ ext: "png", label: "PNG image", size: "320×240" });
  });

  test("animated GIF cut after 2 of 4 frames → truncated, not 2 frames delivered", async () => {
    const gif = await makeAnimated(160, 120, { colours: [[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 0]] });
    const cut = gif.subarray(0, Math.floor(gif.length * 0.6));
    const err = await refused(processBytes(cut, "anim.gif"));
    expect(err.reason).toBe("truncated");
    expect(err.params).toMatchObject({ ext: "gif", label: "GIF image" });
  });

  test("WebP whose RIFF size is more than the file → truncated", async () => {
    const webp = await sharp({ create: { width: 400, height: 300, channels: 3, background: "#336699" } }).webp().toBuffer();
    const err = await refused(processBytes(truncate(webp, 0.5), "photo.webp"));
    expect(err.reason).toBe("truncated");
    expect(err.params).toMatchObject({ ext: "webp", label: "WebP image" });
  });
});
