/**
 * Generates docket's samples into a temp folder and checks every manifest fact with the real
 * libraries (pdf.js, sharp, file-type), then checks the committed samples/ equals that fresh
 * generation byte for byte (the generator is deterministic).
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileTypeFromBuffer } from "file-type";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { SAMPLES } from "../../scripts/samples/catalog.ts";
import { MANIFEST_FILE, SAMPLES_BUDGET_BYTES } from "../../scripts/samples/generate.ts";
import { MANIFEST_REASONS, parseManifest, type ManifestRow } from "../../scripts/samples/manifest.ts";
import { CARD_COLOURS } from "../../scripts/samples/raster.ts";
import { readPdf } from "./pdfjs.ts";

const repoRoot = resolve(import.meta.dirname, "../..");
let dir = "";
let rows: ManifestRow[] = [];
let cliOutput = "";
const bytesOf = (file: string) => readFile(join(dir, file)).then((b) => new Uint8Array(b));
const rowOf = (file: string) => {
  const row = rows.find((r) => r.file === file);
  if (!row) throw new Error(`no manifest row for ${file}`);
  return row;
};
const latin1 = (b: Uint8Array) => Buffer.from(b).toString("latin1");

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "docket-samples-"));
  // The real entry point, as `bun run samples -- <dir>` would run it.
  cliOutput = execFileSync("bun", [resolve(repoRoot, "scripts/make-samples.ts"), dir], { encoding: "utf8", timeout: 60_000 });
  rows = parseManifest(join(dir, MANIFEST_FILE));
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("manifest", () => {
  test("the CLI reports what it wrote", () => {
    expect(cliOutput).toMatch(new RegExp(`^wrote ${SAMPLES.length + 3} files, \\d+ bytes, to ${dir}\n$`));
  });

  test("has one row per catalog entry, with the catalog's facts and reasons", () => {
    expect(rows.map((r) => r.file)).toEqual(SAMPLES.map((s) => s.file));
    for (const spec of SAMPLES) {
      const row = rowOf(spec.file);
      expect(row.expected, spec.file).toBe(spec.expected);
      expect(row.reason, spec.file).toBe(spec.reason);
      expect(row.facts, spec.file).toEqual({ ...spec.facts, textContains: [...(spec.facts.textContains ?? [])] });
    }
  });

  test("covers every reject reason of the shared vocabulary and the kinds the demo needs", () => {
    const reasons = new Set(rows.filter((r) => r.expected === "reject").map((r) => r.reason));
    expect([...reasons].sort()).toEqual([...MANIFEST_REASONS].sort());
    expect(rows.filter((r) => r.expected === "ok").length).toBe(17); // 28 samples, 11 of them refusals
  });

  test("total size stays under the budget", async () => {
    let total = 0;
    for (const name of await readdir(dir)) total += (await readFile(join(dir, name))).length;
    expect(total).toBeLessThan(SAMPLES_BUDGET_BYTES);
  });

  test("real_type agrees with file-type's content detection", async () => {
    // file-type only looks at offset 0 and does not classify text/SVG; those are the listed exceptions.
    const exceptions: Record<string, string | undefined> = { "pdf_junk_before_header.pdf": undefined, "img_svg_xxe.svg": "application/xml" };
    for (const row of rows) {
      const detected = (await fileTypeFromBuffer(await bytesOf(row.file)))?.mime;
      const want = row.file in exceptions ? exceptions[row.file] : row.realType === "unknown" || row.realType === "text/plain" ? undefined : row.realType;
      expect(detected, row.file).toBe(want);
    }
  });
});

describe("ok PDFs open in pdf.js with the promised pages and text", () => {
  const pdfRows = () => rows.filter((r) => r.expected === "ok" && r.realType === "application/pdf");
  test("each one", async () => {
    expect(pdfRows().length).toBeGreaterThanOrEqual(8);
    for (const row of pdfRows()) {
      const pdf = await readPdf(await bytesOf(row.file));
      expect(pdf.numPages, row.file).toBe(row.facts.pages);
      const all = pdf.pageTexts.join("\n");
      for (const t of row.facts.textContains) expect(all, row.file).toContain(t);
      if (row.facts.noText) {
        expect(all.trim(), row.file).toBe("");
        expect(pdf.paintsImage, row.file).toEqual(pdf.pageTexts.map(() => true));
      } else {
        expect(all.trim().length, row.file).toBeGreaterThan(0);
      }
    }
  });

  test("the 3-page base.pdf reads Hello page N on page N", async () => {
    const pdf = await readPdf(await bytesOf("pdf_text_3pages.pdf"));
    expect(pdf.pageTexts.map((t) => t.split("\n")[0])).toEqual(["Hello page 1", "Hello page 2", "Hello page 3"]);
  });

  test("junk: %PDF- starts at byte 512; broken xref: startxref does not point at the xref", async () => {
    const junk = await bytesOf("pdf_junk_before_header.pdf");
    expect(latin1(junk).indexOf("%PDF-")).toBe(512);
    const broken = latin1(await bytesOf("pdf_broken_xref_recoverable.pdf"));
    const startxref = Number(/startxref\n(\d+)\n%%EOF\n$/.exec(broken)?.[1]);
    expect(broken.indexOf("\nxref\n") + 1 - startxref).toBe(46);
    expect(broken.slice(startxref, startxref + 4)).not.toBe("xref");
  });

  test("the empty-user-password PDF is really encrypted (RC4 R2) and opens without a password", async () => {
    const bytes = await bytesOf("pdf_encrypted_empty_userpw.pdf");
    expect(latin1(bytes)).toMatch(/\/Filter \/Standard \/V 1 \/R 2 .*\/P -60/);
    expect(latin1(bytes)).toMatch(/\/Encrypt \d+ 0 R/);
    const pdf = await readPdf(bytes);
    expect(pdf.pageTexts[0]).toContain("Price List 2024-B");
  });
});

describe("ok images: sharp metadata and a full decode", () => {
  test("each one has the promised displayed size and frames, and decodes fully", async () => {
    const imageRows = rows.filter((r) => r.expected === "ok" && r.realType.startsWith("image/"));
    expect(imageRows.length).toBeGreaterThanOrEqual(8);
    for (const row of imageRows) {
      const bytes = await bytesOf(row.file);
      const frames = row.facts.frames ?? 1;
      const { width, height } = row.facts;
      if (width === undefined || height === undefined) throw new Error(`${row.file}: ok image row without width/height`);
      const meta = await sharp(bytes, { animated: frames > 1 }).metadata();
      expect(meta.autoOrient, row.file).toEqual({ width, height: height * frames });
      expect(meta.pages ?? 1, row.file).toBe(frames);
      if (frames > 1) expect(meta.pageHeight, row.file).toBe(height);
      const { info } = await sharp(bytes, { animated: frames > 1, failOn: "warning" }).autoOrient().raw().toBuffer({ resolveWithObject: true });
      expect([info.width, info.height], row.file).toEqual([width, height * frames]);
    }
  });

  test("EXIF orientation 6: stored 320x240, upright after autoOrient (red top-left, blue bottom-right)", async () => {
    const bytes = await bytesOf("img_exif_orientation6.jpg");
    const meta = await sharp(bytes).metadata();
    expect([meta.width, meta.height, meta.orientation]).toEqual([320, 240, 6]);
    const { data, info } = await sharp(bytes).autoOrient().raw().toBuffer({ resolveWithObject: true });
    const px = (x: number, y: number) => [...data.subarray((y * info.width + x) * info.channels, (y * info.width + x) * info.channels + 3)];
    const near = (got: number[], want: readonly number[]) => got.every((v, i) => Math.abs(v - want[i]!) < 40);
    expect(near(px(5, 5), CARD_COLOURS.topLeft), `top-left ${px(5, 5)}`).toBe(true);
    expect(near(px(info.width - 5, info.height - 5), CARD_COLOURS.bottomRight), `bottom-right ${px(info.width - 5, info.height - 5)}`).toBe(true);
  });

  test("CMYK JPEG: 4 channels, no profile; converted to sRGB it stays near black (not inverted)", async () => {
    const bytes = await bytesOf("img_cmyk.jpg");
    const meta = await sharp(bytes).metadata();
    expect([meta.space, meta.channels, meta.hasProfile]).toEqual(["cmyk", 4, false]);
    const stats = await sharp(await sharp(bytes).toColourspace("srgb").png().toBuffer()).stats();
    expect(stats.channels).toHaveLength(3);
    for (const c of stats.channels) expect(c.mean).toBeLessThan(40);
  });

  test("RGBA PNG: corners alpha 0, disc alpha 204", async () => {
    const { data, info } = await sharp(await bytesOf("img_rgba.png")).raw().toBuffer({ resolveWithObject: true });
    expect(info.channels).toBe(4);
    const alpha = (x: number, y: number) => data[(y * info.width + x) * 4 + 3];
    expect([alpha(0, 0), alpha(info.width - 1, 0), alpha(0, info.height - 1), alpha(info.width - 1, info.height - 1)]).toEqual([0, 0, 0, 0]);
    expect(alpha(info.width >> 1, info.height >> 1)).toBe(204);
  });

  test("16-bit PNG keeps 16-bit samples (red at (7, 5) = 7*256+5)", async () => {
    const bytes = await bytesOf("img_16bit.png");
    const meta = await sharp(bytes).metadata();
    expect([meta.depth, meta.bitsPerSample, meta.channels, meta.hasAlpha]).toEqual(["ushort", 16, 3, false]);
    const { data, info } = await sharp(bytes).toColourspace("rgb16").raw({ depth: "ushort" }).toBuffer({ resolveWithObject: true });
    const u16 = new Uint16Array(data.buffer, data.byteOffset, data.length / 2);
    expect(u16[(5 * info.width + 7) * 3]).toBe(7 * 256 + 5);
  });

  test("animated GIF/WebP: 3 frames red, lime, blue; GIF loops forever at 200 ms", async () => {
    const gif = await bytesOf("img_animated.gif");
    const meta = await sharp(gif).metadata();
    expect([meta.loop, meta.delay]).toEqual([0, [200, 200, 200]]);
    for (const file of ["img_animated.gif", "img_animated.webp"]) {
      const { data, info } = await sharp(await bytesOf(file), { animated: true }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
      const centre = (frame: number) => [...data.subarray(((frame * 48 + 24) * info.width + 32) * 3, ((frame * 48 + 24) * info.width + 32) * 3 + 3)];
      expect([centre(0), centre(1), centre(2)], file).toEqual([
        [255, 0, 0],
        [0, 255, 0],
        [0, 0, 255],
      ]);
    }
  });
});

describe("reject samples fail the way the manifest says", () => {
  test("empty: 0 bytes, and a well-formed PDF with 0 pages", async () => {
    expect((await bytesOf("empty.pdf")).length).toBe(0);
    const zero = await bytesOf("pdf_zero_pages.pdf");
    expect(latin1(zero)).toContain("/Kids [] /Count 0");
    expect((await readPdf(zero)).numPages).toBe(0);
  });

  test("not_pdf: no %PDF- anywhere; pdf.js refuses the text and the DOCX", async () => {
    for (const file of ["text_as_invoice.pdf", "mislabeled_docx_as_report.pdf"]) {
      const bytes = await bytesOf(file);
      expect(latin1(bytes), file).not.toContain("%PDF-");
      await expect(readPdf(bytes), file).rejects.toThrow(/Invalid PDF|No PDF header/);
    }
    expect(latin1((await bytesOf("mislabeled_docx_as_report.pdf")).subarray(0, 4))).toBe("PK\x03\x04");
  });

  test("truncated PDF: no %%EOF and pdf.js cannot open it", async () => {
    const bytes = await bytesOf("pdf_truncated.pdf");
    expect(latin1(bytes)).not.toMatch(/%%EOF|startxref|trailer/);
    await expect(readPdf(bytes)).rejects.toMatchObject({ name: "InvalidPDFException" });
  });

  test("corrupt PDF: a real header, then nothing pdf.js can parse", async () => {
    const bytes = await bytesOf("pdf_garbage_after_header.pdf");
    expect(latin1(bytes.subarray(0, 9))).toBe("%PDF-1.7\n");
    expect(bytes.length).toBe(15 + 6000);
    await expect(readPdf(bytes)).rejects.toMatchObject({ name: "InvalidPDFException" });
  });

  test("encrypted: pdf.js asks for a password (code 1); the right one opens it", async () => {
    const bytes = await bytesOf("pdf_password_protected.pdf");
    await expect(readPdf(bytes)).rejects.toMatchObject({ name: "PasswordException", code: 1 });
    await expect(readPdf(bytes, { password: "wrong" })).rejects.toMatchObject({ name: "PasswordException", code: 2 });
    expect((await readPdf(bytes, { password: "userpw-66" })).pageTexts[0]).toContain("Memo 66");
  });

  test("truncated JPEG: header says 800x600, decoding fails with premature end, no EOI", async () => {
    const bytes = await bytesOf("img_truncated.jpg");
    const meta = await sharp(bytes).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(["jpeg", 800, 600]);
    expect([...bytes.subarray(-2)]).not.toEqual([0xff, 0xd9]);
    await expect(sharp(bytes).raw().toBuffer()).rejects.toThrow(/premature end/i);
  });

  test("too_many_pixels: IHDR says 30000x30000 and sharp refuses even metadata()", async () => {
    const bytes = await bytesOf("img_bomb_30000x30000.png");
    const ihdr = new DataView(bytes.buffer, bytes.byteOffset + 16, 10);
    expect([ihdr.getUint32(0), ihdr.getUint32(4), ihdr.getUint8(8), ihdr.getUint8(9)]).toEqual([30000, 30000, 1, 3]);
    expect(bytes.length).toBeLessThan(120_000);
    await expect(sharp(bytes).metadata()).rejects.toThrow(/exceeds pixel limit/);
    const meta = await sharp(bytes, { limitInputPixels: false }).metadata();
    expect([meta.width, meta.height]).toEqual([30000, 30000]);
  });

  test("unsupported_type: the SVG carries an external entity; random bytes are nothing sharp knows", async () => {
    expect(latin1(await bytesOf("img_svg_xxe.svg"))).toMatch(/<!ENTITY xxe SYSTEM "file:\/\/\/etc\/passwd">[\s\S]*&xxe;/);
    const random = await bytesOf("random_bytes.bin");
    expect([random.length, random[0], random[1]]).toEqual([8192, 0x5a, 0x13]);
    await expect(sharp(random).metadata()).rejects.toThrow(/unsupported image format/);
  });
});

describe("determinism", () => {
  test("the committed samples/ equals a fresh generation byte for byte", async () => {
    const committed = resolve(repoRoot, "samples");
    const fresh = (await readdir(dir)).sort();
    expect((await readdir(committed)).sort()).toEqual(fresh);
    for (const name of fresh) {
      const [a, b] = await Promise.all([readFile(join(committed, name)), readFile(join(dir, name))]);
      expect(a.equals(b), `${name} differs from a fresh generation; run \`bun run samples\``).toBe(true);
    }
  });
});
