/**
 * issue 13 §1–2: pdf.js decodes CCITT G4, JBIG2 and JPEG 2000 images (its wasm modules, `wasmUrl`),
 * the start-up self-check proves it on a built-in page and names what is missing, and a page whose
 * images pdf.js could not decode is never presented as a preview. Scans are generated here by
 * Debian's tools (scripts/samples/scans.ts).
 */
import { cpSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { unzipSync } from "fflate";
import sharp from "sharp";
import { afterEach, describe, expect, test } from "vitest";
import { pdfEngineSelfCheck } from "../../processors/pdf/engine.ts";
import { BITMAP, CHECK_PAGE, DECODER_KINDS, G4_64x32, J2K_64x32, failedKinds } from "../../processors/pdf/self-check-decoders.ts";
import { isImageDecodeWarning } from "../../processors/pdf/warnings.ts";
import { makeScanPdf, relabelAsJbig2 } from "../../scripts/samples/index.ts";
import { repoRoot } from "./support/fixtures.ts";
import { cleanupWorkDirs, processBytes, workDir } from "./support/run.ts";
import { toolReady } from "../support/tools.ts";

afterEach(cleanupWorkDirs);

/** The Debian tools that make scans here (scripts/samples/scans.ts); each missing one is named once. */
const scanTools = (): boolean => (["convert", "tiff2pdf", "img2pdf", "opj_compress"] as const).every((t) => toolReady(t));

/** Darkest grey level (0 black … 255 white) of an encoded image. */
async function darkest(bytes: Uint8Array): Promise<number> {
  const { channels } = await sharp(bytes).greyscale().stats();
  return channels[0]!.min;
}

/** The first strip of a one-strip little- or big-endian TIFF (tags 273 StripOffsets, 279 StripByteCounts). */
function firstStrip(tiff: Uint8Array): Uint8Array {
  const v = new DataView(tiff.buffer, tiff.byteOffset, tiff.byteLength);
  const le = tiff[0] === 0x49;
  const ifd = v.getUint32(4, le);
  const tags = new Map<number, number>();
  for (let i = 0; i < v.getUint16(ifd, le); i++) {
    const at = ifd + 2 + 12 * i;
    const type = v.getUint16(at + 2, le);
    tags.set(v.getUint16(at, le), type === 3 ? v.getUint16(at + 8, le) : v.getUint32(at + 8, le));
  }
  const offset = tags.get(273)!;
  return tiff.subarray(offset, offset + tags.get(279)!);
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");

describe.skipIf(!scanTools())("pdf.js image decoders (issue 13 §1)", () => {
  test("the built-in bitmaps are what ImageMagick and OpenJPEG make of a 64×32 page with a black left half", async () => {
    const dir = workDir();
    const draw = ["-size", `${BITMAP.width}x${BITMAP.height}`, "xc:white", "-fill", "black", "-draw", `rectangle 0,0 ${BITMAP.width / 2 - 1},${BITMAP.height - 1}`];
    expect(Bun.spawnSync(["convert", ...draw, "-monochrome", "-compress", "Group4", join(dir, "b.tif")]).exitCode).toBe(0);
    expect(hex(firstStrip(readFileSync(join(dir, "b.tif"))))).toBe(G4_64x32);
    expect(Bun.spawnSync(["convert", ...draw, "-depth", "8", join(dir, "b.pgm")]).exitCode).toBe(0);
    expect(Bun.spawnSync(["opj_compress", "-i", join(dir, "b.pgm"), "-o", join(dir, "b.j2k")]).exitCode).toBe(0);
    expect(Buffer.from(readFileSync(join(dir, "b.j2k"))).toString("base64")).toBe(J2K_64x32);
  });

  test("failedKinds: a blank render fails all three kinds, a render with the left halves black none", () => {
    const w = CHECK_PAGE.width;
    const h = CHECK_PAGE.height;
    const blank = new Uint8ClampedArray(w * h * 4).fill(255);
    expect(failedKinds(blank, w, h).map((k) => k.name)).toEqual(DECODER_KINDS.map((k) => k.name));
    const inked = blank.slice();
    for (const k of DECODER_KINDS) {
      for (let y = h - CHECK_PAGE.imageY - BITMAP.height; y < h - CHECK_PAGE.imageY; y++) {
        for (let x = k.x; x < k.x + BITMAP.width / 2; x++) inked.fill(0, (y * w + x) * 4, (y * w + x) * 4 + 3);
      }
    }
    expect(failedKinds(inked, w, h)).toEqual([]);
  });

  test("the self-check passes with pdfjs-dist's wasm folder in place", async () => {
    expect(await pdfEngineSelfCheck()).toMatchObject({ ok: true });
  });

  test("without pdfjs-dist/wasm the self-check fails naming the three decoders and their modules", async () => {
    // A copy of the engine whose pdfjs-dist has everything but the wasm folder.
    const dir = workDir();
    const src = join(repoRoot, "node_modules/pdfjs-dist");
    const dst = join(dir, "node_modules/pdfjs-dist");
    mkdirSync(join(dst, "legacy/build"), { recursive: true });
    for (const f of ["package.json", "legacy/build/pdf.mjs", "legacy/build/pdf.worker.mjs"]) cpSync(join(src, f), join(dst, f));
    for (const d of ["standard_fonts", "cmaps"]) cpSync(join(src, d), join(dst, d), { recursive: true });
    // Every other package as installed (symlinks), so only the wasm folder is missing.
    for (const m of readdirSync(join(repoRoot, "node_modules"))) if (m !== "pdfjs-dist" && !m.startsWith(".")) symlinkSync(join(repoRoot, "node_modules", m), join(dir, "node_modules", m));
    for (const f of ["engine.ts", "self-check-pdf.ts", "self-check-decoders.ts", "open.ts", "render.ts", "page-worker.ts", "pdfjs-thread.ts", "warnings.ts"].map((n) => `processors/pdf/${n}`).concat(["processors/types.ts", "processors/budget.ts", "bot/jobs/reasons.ts"])) {
      mkdirSync(join(dir, f, ".."), { recursive: true });
      cpSync(join(repoRoot, f), join(dir, f));
    }
    writeFileSync(join(dir, "probe.ts"), `import { pdfEngineSelfCheck } from "./processors/pdf/engine.ts";\nconsole.log(JSON.stringify(await pdfEngineSelfCheck()));\n`);
    const proc = Bun.spawnSync([process.execPath, join(dir, "probe.ts")], { cwd: dir, stderr: "pipe", env: { ...process.env, BUN_INSTALL_CACHE_DIR: join(dir, "no-cache") } });
    const check = JSON.parse(proc.stdout.toString().trim().split("\n").pop() ?? "{}") as { ok: boolean; missing?: string };
    expect(check.ok, proc.stderr.toString()).toBe(false);
    for (const k of DECODER_KINDS) expect(check.missing).toContain(`${k.name} (needs ${k.module})`);
    expect(check.missing).toMatch(/pdf\.js: .*(wasm|initialize)/i);
  });

  for (const kind of ["g4", "phone", "jpx"] as const) {
    test(`a generated 300-dpi ${kind} scan previews with ink, and no decode warning is recorded`, async () => {
      const r = await processBytes(await makeScanPdf(kind, [["Scanned page one"]]), `${kind}.pdf`);
      expect(r.facts).toMatchObject({ pages: 1, textChars: 0 });
      expect(r.facts.undecodedPages).toBeUndefined();
      const preview = r.outputs.find((o) => o.fileName.endsWith("-page1.jpg"))!;
      expect(await darkest(readFileSync(preview.path))).toBeLessThan(64);
    }, 60_000);
  }
});

describe.skipIf(!scanTools())("a page whose images failed to decode (issue 13 §2)", () => {
  test("a G4 scan relabelled as JBIG2Decode: no preview, the page and pdf.js's warning in the facts", async () => {
    const r = await processBytes(relabelAsJbig2(await makeScanPdf("g4", [["Relabelled page"]])), "relabelled.pdf");
    expect(r.outputs.map((o) => o.fileName)).toEqual([]);
    expect(r.facts).toMatchObject({ pages: 1, previewSkipped: "page 1 images could not be decoded", undecodedPages: [1] });
    const warnings = r.facts.imageWarnings as string[];
    expect(warnings[0]).toMatch(/^page 1: Unable to decode image ".+": "Jbig2Error/);
    expect(warnings.every(isImageDecodeWarning)).toBe(true);
  }, 60_000);

  test("action pages: the undecoded page is in the ZIP, marked in its name; the decoded one is not", async () => {
    const good = await makeScanPdf("g4", [["Good page"], ["Second page"]]);
    // Relabel only page 2's image: tiff2pdf writes one image object per page, in page order.
    const text = Buffer.from(good).toString("latin1");
    const second = text.indexOf("/CCITTFaxDecode", text.indexOf("/CCITTFaxDecode") + 1);
    const bytes = Buffer.from(text.slice(0, second) + "/JBIG2Decode   " + text.slice(second + "/CCITTFaxDecode".length), "latin1");
    const r = await processBytes(new Uint8Array(bytes), "mixed.pdf", { action: "pages" });
    expect(r.facts).toMatchObject({ undecodedPages: [2], renderedPages: 2 });
    const zip = unzipSync(readFileSync(r.outputs[0]!.path));
    expect(Object.keys(zip)).toEqual(["page-1.jpg", "page-2-images-not-decoded.jpg"]);
    expect(await darkest(zip["page-1.jpg"]!)).toBeLessThan(64);
    expect(await darkest(zip["page-2-images-not-decoded.jpg"]!)).toBeGreaterThan(250);
  }, 60_000);
});
