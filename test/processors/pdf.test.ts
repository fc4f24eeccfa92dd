/**
 * PDF processor on PDFs written here (makePdf from scripts/samples, with its RC4 40-bit
 * encryption): field cases BR-09 and BR-11, damaged files, caps, outputs.
 */
import { cpSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { unzipSync } from "fflate";
import sharp from "sharp";
import { afterEach, describe, expect, test } from "vitest";
import { pdfEngineSelfCheck } from "../../processors/pdf/engine.ts";
import { processFile } from "../../processors/process-file.ts";
import type { ProcessorResult } from "../../processors/types.ts";
import { makePdf, prependJunk } from "../../scripts/samples/index.ts";
import { fixturesDir, haveFixtures, noteIfNoFixtures, repoRoot, testOptions } from "./support/fixtures.ts";
import { cleanupWorkDirs, processBytes, refused, workDir, writeInput } from "./support/run.ts";

noteIfNoFixtures("pdf");

afterEach(cleanupWorkDirs);

const text = (r: ProcessorResult): string => readFileSync(r.outputs.find((o) => o.mime.startsWith("text/plain"))!.path, "utf8");


const THREE = [["Hello page 1", "Contract No. 77-A"], ["Page 2 of 3"], ["Page 3 of 3"]];

describe("PDF outputs and facts", () => {
  test("3-page text PDF → pages, version, title, text with page separators, page-1 JPEG preview", async () => {
    const r = await processBytes(makePdf({ pages: THREE, title: "Contract 77-A" }), "Contract_77-A.pdf");
    expect(r.facts).toMatchObject({ type: "application/pdf", pages: 3, pdfVersion: "1.4", title: "Contract 77-A", encrypted: false });
    expect(r.facts.textChars).toBe(THREE.flat().join("").replace(/\s/g, "").length);
    const t = text(r);
    expect(t).toContain("--- page 1 of 3 ---\nHello page 1\nContract No. 77-A");
    expect(t).toContain("--- page 3 of 3 ---\nPage 3 of 3");
    expect(r.outputs.map((o) => o.fileName)).toEqual(["Contract_77-A.txt", "Contract_77-A-page1.jpg"]);
    const preview = readFileSync(r.outputs[1]!.path);
    const meta = await sharp(preview).metadata();
    expect(meta.format).toBe("jpeg");
    expect(Math.max(meta.width!, meta.height!)).toBe(2000);
    expect(meta.height! > meta.width!).toBe(true); // A4 portrait
    const st = await sharp(preview).stats();
    expect(st.channels[0]!.mean).toBeGreaterThan(200); // mostly white paper …
    expect(st.channels[0]!.min).toBeLessThan(100); // … with dark text drawn on it
  });

  test("the preview's colours come out as drawn: a red and a blue square on white (RGBA pixels to JPEG, channel order kept)", async () => {
    // A4 (595×842 pt), preview 2000 px tall: 2000 / 842 px per pt. PDF y grows upwards.
    const squares = "1 0 0 rg 100 100 200 200 re f 0 0 1 rg 300 500 200 200 re f";
    const r = await processBytes(makePdf({ pages: [["Colours"]], contents: [squares] }), "colours.pdf");
    const preview = sharp(readFileSync(r.outputs.find((o) => o.fileName.endsWith("-page1.jpg"))!.path));
    const { data, info } = await preview.raw().toBuffer({ resolveWithObject: true });
    const at = (xPt: number, yPt: number): number[] => {
      const k = info.height / 842;
      const i = (Math.round((842 - yPt) * k) * info.width + Math.round(xPt * k)) * info.channels;
      return [...data.subarray(i, i + 3)];
    };
    const near = (got: number[], want: number[]): void => got.forEach((v, c) => expect(Math.abs(v - want[c]!), `${got} vs ${want}`).toBeLessThan(24));
    near(at(200, 200), [255, 0, 0]);
    near(at(400, 600), [0, 0, 255]);
    near(at(550, 50), [255, 255, 255]);
  });

  test("action `pages` → ZIP of one JPEG per page", async () => {
    const r = await processBytes(makePdf({ pages: THREE }), "c.pdf", { action: "pages" });
    expect(r.outputs.map((o) => [o.fileName, o.mime])).toEqual([["c-pages.zip", "application/zip"]]);
    const entries = unzipSync(readFileSync(r.outputs[0]!.path));
    expect(Object.keys(entries)).toEqual(["page-1.jpg", "page-2.jpg", "page-3.jpg"]);
    for (const jpg of Object.values(entries)) expect([jpg[0], jpg[1]]).toEqual([0xff, 0xd8]);
    expect(r.facts.renderedPages).toBe(3);
  });

  test("action `pages` on a full disk (pages.zip → /dev/full): the write error (ENOSPC) is the processor's error, not a cut-short ZIP", async () => {
    const { path, dir } = writeInput(makePdf({ pages: THREE }));
    symlinkSync("/dev/full", join(dir, "pages.zip"));
    const err = await processFile(path, testOptions(dir, "c.pdf", { action: "pages" })).then(
      () => null,
      (e: unknown) => e as NodeJS.ErrnoException,
    );
    expect([err?.code, err?.syscall]).toEqual(["ENOSPC", "write"]);
  });

  test("scanned-like PDF without text → no .txt, textChars 0, preview still made", async () => {
    const r = await processBytes(makePdf({ pages: [[]] }), "scan.pdf");
    expect(r.facts.textChars).toBe(0);
    expect(r.outputs.map((o) => o.mime)).toEqual(["image/jpeg"]);
  });

  test("BR-08 PDF bytes with no name and no MIME → processed as PDF, no mismatch, generic name", async () => {
    const r = await processBytes(makePdf({ pages: THREE }), null);
    expect(r.facts.pages).toBe(3);
    expect(r.facts.mismatchInfo).toBeUndefined();
    expect(r.outputs[0]!.fileName).toBe("document.txt");
  });

  test("BR-21 PDF named .jpg → ok, mismatch {jpg → pdf}", async () => {
    const r = await processBytes(makePdf({ pages: [["Receipt 2207"]] }), "photo.jpg");
    expect(r.facts.mismatchInfo).toEqual({ declaredExt: "jpg", actualExt: "pdf", actualLabel: "PDF document" });
    expect(r.facts.mismatch).toBe("sent as .jpg but is a PDF document");
  });
});

describe("BR-09 encryption", () => {
  test("owner-password-only (empty user password) opens: pages=3, page 1 text", async () => {
    const r = await processBytes(makePdf({ pages: THREE, encrypt: { userPassword: "", ownerPassword: "owner" } }), "owneronly.pdf");
    expect(r.facts).toMatchObject({ pages: 3, encrypted: true });
    expect(text(r)).toContain("Hello page 1");
  });

  test("owner-password-only with an Info /Title → the RC4-encrypted title is read back decrypted", async () => {
    const r = await processBytes(makePdf({ pages: [["Memo 12"]], title: "Memo (draft) 12", encrypt: { userPassword: "", ownerPassword: "owner" } }), "memo.pdf");
    expect(r.facts).toMatchObject({ pages: 1, encrypted: true, title: "Memo (draft) 12" });
  });

  test("user password required → encrypted, no stack trace in the message", async () => {
    const err = await refused(processBytes(makePdf({ pages: THREE, encrypt: { userPassword: "secret", ownerPassword: "owner" } }), "userpw.pdf"));
    expect(err.reason).toBe("encrypted");
    expect(err.message).not.toMatch(/\n\s+at /);
  });

  test.skipIf(!haveFixtures)("shared AES-256 fixtures: empty user pw opens, user pw refused", async () => {
    const ok = await processBytes(readFileSync(join(fixturesDir, "pdf_encrypted_empty_userpw.pdf")), "price_list.pdf");
    expect(text(ok)).toContain("Price List 2024-B");
    const err = await refused(processBytes(readFileSync(join(fixturesDir, "pdf_password_protected.pdf")), "memo.pdf"));
    expect(err.reason).toBe("encrypted");
  });
});

describe("damaged and refused PDFs", () => {
  test("first half of a 3-page PDF → truncated", async () => {
    const full = makePdf({ pages: THREE });
    const err = await refused(processBytes(full.subarray(0, Math.floor(full.length / 2)), "policy.pdf"));
    expect(err.reason).toBe("truncated");
  });

  test("valid header then random bytes → corrupt", async () => {
    const junk = new Uint8Array(6000);
    let x = 4812;
    for (let i = 0; i < junk.length; i++) junk[i] = (x = (x * 1103515245 + 12345) >>> 0) >>> 24;
    const err = await refused(processBytes(new Uint8Array([...Buffer.from("%PDF-1.7\n"), ...junk]), "report.pdf"));
    expect(err.reason).toBe("corrupt");
  });

  test("512 junk bytes before %PDF- → still a PDF (readers accept 1024)", async () => {
    const r = await processBytes(prependJunk(makePdf({ pages: [["Quote Q-2291"]] }), 512), "quote.pdf");
    expect(text(r)).toContain("Quote Q-2291");
  });

  test("%PDF- after byte 1024 is not a PDF → not_pdf when declared as PDF", async () => {
    const err = await refused(processBytes(prependJunk(makePdf({ pages: [["late"]] }), 1100), "late.pdf"));
    expect(err.reason).toBe("not_pdf");
  });

  test("broken xref offsets (46-byte shift) are recovered", async () => {
    const good = Buffer.from(makePdf({ pages: [["Statement 3315"], ["p2"]] }));
    const headerEnd = good.indexOf("\n", good.indexOf("\n") + 1) + 1;
    const broken = Buffer.concat([good.subarray(0, headerEnd), Buffer.from(`%${"z".repeat(44)}\n`), good.subarray(headerEnd)]);
    const r = await processBytes(broken, "statement.pdf");
    expect(r.facts.pages).toBe(2);
    expect(text(r)).toContain("Statement 3315");
  });

  test("0 pages → empty {what: pdf}", async () => {
    const err = await refused(processBytes(makePdf({ pages: [] }), "empty_form.pdf"));
    expect([err.reason, err.params]).toEqual(["empty", { what: "pdf" }]);
  });

  test("over maxPdfPages → too_many_pages {pages, limit}", async () => {
    const err = await refused(processBytes(makePdf({ pages: [["1"], ["2"], ["3"], ["4"], ["5"]] }), "big.pdf", { maxPdfPages: 4 }));
    expect([err.reason, err.params]).toEqual(["too_many_pages", { pages: 5, limit: 4 }]);
  });
});

describe("BR-11 pdf.js engine self-check", () => {
  test("self-check opens the built-in PDF and reports the pdf.js version", async () => {
    const check = await pdfEngineSelfCheck();
    const version = JSON.parse(readFileSync(join(repoRoot, "node_modules/pdfjs-dist/package.json"), "utf8")).version;
    expect(check).toMatchObject({ ok: true, version, pageWorker: "thread" });
  });

  test("without @napi-rs/canvas the self-check names it, and PDFs get pdf_engine_unavailable", async () => {
    // A copy of the engine with a node_modules that has pdfjs-dist but no @napi-rs/canvas
    // (what `npm i --omit=optional` leaves behind).
    const dir = workDir();
    const src = join(repoRoot, "node_modules/pdfjs-dist");
    const dst = join(dir, "node_modules/pdfjs-dist");
    mkdirSync(join(dst, "legacy/build"), { recursive: true });
    for (const f of ["package.json", "legacy/build/pdf.mjs", "legacy/build/pdf.worker.mjs"]) cpSync(join(src, f), join(dst, f));
    cpSync(join(src, "standard_fonts"), join(dst, "standard_fonts"), { recursive: true });
    for (const f of ["processors/pdf/engine.ts", "processors/pdf/self-check-pdf.ts", "processors/pdf/self-check-decoders.ts", "processors/pdf/open.ts", "processors/pdf/page-worker.ts", "processors/pdf/pdfjs-thread.ts", "processors/pdf/warnings.ts", "processors/types.ts", "bot/jobs/reasons.ts"]) {
      mkdirSync(join(dir, f, ".."), { recursive: true });
      cpSync(join(repoRoot, f), join(dir, f));
    }
    writeFileSync(
      join(dir, "probe.ts"),
      `import { pdfEngineSelfCheck } from "./processors/pdf/engine.ts";
import { openPdf } from "./processors/pdf/open.ts";
const check = await pdfEngineSelfCheck();
let reason = "none";
try { await openPdf(new Uint8Array([37, 80, 68, 70, 45])); } catch (e) { reason = e.reason ?? String(e); }
console.log(JSON.stringify({ check, reason }));
`,
    );
    const proc = Bun.spawnSync([process.execPath, join(dir, "probe.ts")], { cwd: dir, stderr: "pipe", env: { ...process.env, BUN_INSTALL_CACHE_DIR: join(dir, "no-cache") } });
    const out = proc.stdout.toString().trim().split("\n").pop()!;
    const { check, reason } = JSON.parse(out) as { check: { ok: boolean; missing?: string }; reason: string };
    expect(check.ok).toBe(false);
    expect(check.missing).toContain("@napi-rs/canvas");
    expect(reason).toBe("pdf_engine_unavailable");
  });

  test("a `bun build` bundle of the PDF processor opens a PDF (worker set up without ./pdf.worker.mjs)", async () => {
    const dir = workDir();
    // Next to the bundle: the native @napi-rs/canvas (external) and pdf.js's font data, but no
    // pdf.worker.mjs file anywhere — the worker must come from inside the bundle.
    mkdirSync(join(dir, "node_modules/pdfjs-dist"), { recursive: true });
    symlinkSync(join(repoRoot, "node_modules/@napi-rs"), join(dir, "node_modules/@napi-rs"));
    cpSync(join(repoRoot, "node_modules/pdfjs-dist/package.json"), join(dir, "node_modules/pdfjs-dist/package.json"));
    symlinkSync(join(repoRoot, "node_modules/pdfjs-dist/standard_fonts"), join(dir, "node_modules/pdfjs-dist/standard_fonts"));
    writeFileSync(
      join(dir, "entry.ts"),
      `import { processPdf } from ${JSON.stringify(join(repoRoot, "processors/pdf/process-pdf.ts"))};
const r = await processPdf(process.argv[2], { workDir: process.argv[3], maxInputPixels: 1e8, maxOutputSide: 800, maxPdfPages: 10, pdfPageBudgetMs: 10000 });
console.log(JSON.stringify(r.facts));
process.exit(0);
`,
    );
    const built = await Bun.build({ entrypoints: [join(dir, "entry.ts")], outdir: join(dir, "dist"), target: "bun", external: ["@napi-rs/canvas"] });
    expect(built.success).toBe(true);
    rmSync(join(dir, "entry.ts"));
    writeFileSync(join(dir, "in.pdf"), makePdf({ pages: THREE }));
    mkdirSync(join(dir, "work"));
    const proc = Bun.spawnSync([process.execPath, join(dir, "dist/entry.js"), join(dir, "in.pdf"), join(dir, "work")], { cwd: dir, stderr: "pipe" });
    expect(proc.stderr.toString()).not.toContain("fake worker");
    expect(JSON.parse(proc.stdout.toString().trim().split("\n").pop()!).pages).toBe(3);
  });
});
