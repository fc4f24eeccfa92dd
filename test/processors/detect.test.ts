/**
 * Content detection, declared-type mismatch (BR-08, BR-21), result naming and the
 * result-upload check, on bytes made here.
 */
import sharp from "sharp";
import { afterEach, describe, expect, test } from "vitest";
import { detectFile, findPdfSignature } from "../../processors/detect.ts";
import { declaredType, findMismatch } from "../../processors/mismatch.ts";
import { displayStem } from "../../processors/naming.ts";
import { checkOutputSizes } from "../../processors/output-size.ts";
import { makeDocx, makePdf } from "../../scripts/samples/index.ts";
import { processFile } from "../../processors/process-file.ts";
import { ProcessingError } from "../../processors/types.ts";
import { testOptions } from "./support/fixtures.ts";
import { cleanupWorkDirs, writeInput } from "./support/run.ts";

afterEach(cleanupWorkDirs);
const write = writeInput;

async function reasonOf(bytes: Uint8Array, name: string | null, mime: string | null = null): Promise<string> {
  const { path, dir } = write(bytes);
  const err = await processFile(path, { ...testOptions(dir, name), declaredMime: mime }).then(
    () => "ok",
    (e: unknown) => (e instanceof ProcessingError ? e.reason : `not a ProcessingError: ${String(e)}`),
  );
  return err;
}

describe("detectFile", () => {
  test("by content, not by name", async () => {
    const png = await sharp({ create: { width: 10, height: 10, channels: 3, background: "red" } }).png().toBuffer();
    expect(await detectFile(write(png).path)).toEqual({ mime: "image/png", kind: "image", ext: "png", label: "PNG image" });
    expect((await detectFile(write(makePdf({ pages: [["x"]] })).path)).kind).toBe("pdf");
    expect((await detectFile(write(makeDocx()).path)).label).toBe("Word document");
    expect((await detectFile(write(new TextEncoder().encode("Invoice 4812\nTotal: 5\n")).path)).mime).toBe("text/plain");
    const svg = new TextEncoder().encode('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"/>');
    expect((await detectFile(write(svg).path)).mime).toBe("image/svg+xml");
    const random = Uint8Array.from({ length: 8192 }, (_, i) => (i * 7919 + 0x5a) & 255);
    expect((await detectFile(write(random).path)).mime).toBe("application/octet-stream");
  });

  test("PDF signature within the first 1024 bytes only", () => {
    const at = (n: number): Uint8Array => new Uint8Array([...new Uint8Array(n).fill(0x20), ...new TextEncoder().encode("%PDF-1.4")]);
    expect(findPdfSignature(at(0))).toBe(0);
    expect(findPdfSignature(at(512))).toBe(512);
    expect(findPdfSignature(at(1019))).toBe(1019);
    expect(findPdfSignature(at(1020))).toBe(-1);
  });
});

describe("refusals by content (fixture README reasons)", () => {
  test("0 bytes → empty; DOCX/text as .pdf → not_pdf; DOCX as .docx, random → unsupported_type", async () => {
    expect(await reasonOf(new Uint8Array(0), "scan.pdf")).toBe("empty");
    expect(await reasonOf(makeDocx(), "report.pdf")).toBe("not_pdf");
    expect(await reasonOf(makeDocx(), "report", "application/pdf")).toBe("not_pdf");
    expect(await reasonOf(makeDocx(), "report.docx")).toBe("unsupported_type");
    expect(await reasonOf(new TextEncoder().encode("Invoice 4812, no header"), "invoice.pdf")).toBe("not_pdf");
    expect(await reasonOf(Uint8Array.from({ length: 4096 }, (_, i) => (i * 31 + 0x5a) & 255), "IMG_0042.jpg")).toBe("unsupported_type");
  });

  test("BR-08 JPEG as application/octet-stream named 'scan' → JPEG 800×600, no mismatch", async () => {
    const jpg = await sharp({ create: { width: 800, height: 600, channels: 3, background: "#445566" } }).jpeg().toBuffer();
    const { path, dir } = write(jpg);
    const r = await processFile(path, { ...testOptions(dir, "scan"), declaredMime: "application/octet-stream" });
    expect([r.facts.type, r.facts.width, r.facts.height]).toEqual(["image/jpeg", 800, 600]);
    expect(r.facts.mismatchInfo).toBeUndefined();
    expect(r.outputs[0]!.fileName).toBe("scan.jpg");
  });

  test("BR-21 PNG sent as report.pdf (application/pdf) → PNG 10×10 ok, mismatch pdf → png", async () => {
    const png = await sharp({ create: { width: 10, height: 10, channels: 3, background: "red" } }).png().toBuffer();
    const { path, dir } = write(png);
    const r = await processFile(path, { ...testOptions(dir, "report.pdf"), declaredMime: "application/pdf" });
    expect([r.facts.type, r.facts.width, r.facts.height]).toEqual(["image/png", 10, 10]);
    expect(r.facts.mismatchInfo).toEqual({ declaredExt: "pdf", actualExt: "png", actualLabel: "PNG image" });
  });
});

describe("mismatch and naming helpers", () => {
  test("declared type from name, else MIME; aliases compare equal", () => {
    expect(declaredType("Photo.JPEG", null)).toBe("jpg");
    expect(declaredType(null, "application/pdf")).toBe("pdf");
    expect(declaredType("scan", "application/octet-stream")).toBeNull();
    const jpeg = { mime: "image/jpeg", kind: "image" as const, ext: "jpg", label: "JPEG image" };
    expect(findMismatch(jpeg, "a.jpeg")).toBeNull();
    expect(findMismatch(jpeg, "notes.scan")).toBeNull(); // an unknown extension is just a name
    expect(findMismatch(jpeg, "a.png")).toEqual({ declaredExt: "png", actualExt: "jpg", actualLabel: "JPEG image" });
  });

  test("display stems never carry paths or control characters", () => {
    expect(displayStem("../../etc/passwd.pdf", "document")).toBe("passwd");
    expect(displayStem("C:\\Users\\x\\Q3 report.pdf", "document")).toBe("Q3 report");
    expect(displayStem("a\u0000b\nc.pdf", "document")).toBe("abc");
    expect(displayStem("..", "document")).toBe("document");
    expect(displayStem(null, "image")).toBe("image");
  });
});

describe("checkOutputSizes", () => {
  const out = (size: number) => ({ path: "/w/x", fileName: "x", mime: "image/jpeg", size });
  test("passes at the limit, refuses the largest over it (size in bytes, limit in bytes)", () => {
    expect(() => checkOutputSizes([out(52_428_800)], 52_428_800)).not.toThrow();
    let err: unknown;
    try {
      checkOutputSizes([out(10), out(52_400_000), out(53_000_000)], 52_428_800);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ProcessingError);
    expect((err as ProcessingError).reason).toBe("result_too_big");
    expect((err as ProcessingError).params).toEqual({ size_bytes: 53_000_000, limit_bytes: 52_428_800 });
  });
});
