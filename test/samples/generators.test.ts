/**
 * The sample generators as a library (scripts/samples/index.ts): structure of makePdf's output,
 * RC4, the PNG encoder, oriented JPEGs, DOCX determinism, and the manifest parser (including the
 * shared fixtures' MANIFEST.tsv when ../shared/fixtures is present).
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import sharp from "sharp";
import { describe, expect, test } from "vitest";
import {
  encodePng,
  makeBombPng,
  makeDocx,
  makeJpeg,
  makePdf,
  makeScanJpeg,
  parseManifest,
  parseManifestText,
  rc4,
  CARD_COLOURS,
  MANIFEST_COLUMNS,
} from "../../scripts/samples/index.ts";
import { readPdf } from "./pdfjs.ts";

const latin1 = (b: Uint8Array) => Buffer.from(b).toString("latin1");

/** Checks that every in-use xref entry points at "N 0 obj" and startxref at "xref". */
function expectXrefConsistent(pdf: Uint8Array): void {
  const text = latin1(pdf);
  const startxref = Number(/startxref\n(\d+)\n%%EOF\n$/.exec(text)?.[1]);
  expect(text.slice(startxref, startxref + 5)).toBe("xref\n");
  const [, first, count] = /^xref\n(\d+) (\d+)\n/.exec(text.slice(startxref)) ?? [];
  expect(first).toBe("0");
  const entries = text.slice(startxref).split("\n").slice(2, 2 + Number(count));
  expect(entries[0]).toBe("0000000000 65535 f ");
  entries.slice(1).forEach((entry, i) => {
    expect(entry).toMatch(/^\d{10} 00000 n $/);
    const at = Number(entry.slice(0, 10));
    expect(text.slice(at, at + `${i + 1} 0 obj\n`.length)).toBe(`${i + 1} 0 obj\n`);
  });
  expect(/\/Size (\d+)/.exec(text.slice(startxref))?.[1]).toBe(count);
}

describe("makePdf", () => {
  test("writes exact xref offsets for plain, uncompressed, image and encrypted files", async () => {
    const scan = await makeScanJpeg(85, 110);
    const variants = [
      makePdf({ pages: [["a"], ["b (c) \\ d"]] }),
      makePdf({ pages: [["plain"]], compress: false, version: "1.7" }),
      makePdf({ pages: [[], ["text over image"]], images: [scan, scan] }),
      makePdf({ pages: [["secret"]], encrypt: { userPassword: "pw", ownerPassword: "owner" } }),
      makePdf({ pages: [] }),
    ];
    for (const pdf of variants) expectXrefConsistent(pdf);
    const read = await readPdf(variants[2]!);
    expect([read.numPages, read.pageTexts[1], read.paintsImage]).toEqual([2, "text over image", [true, true]]);
    expect((await readPdf(variants[0]!)).pageTexts).toEqual(["a", "b (c) \\ d"]);
  });

  test("is deterministic and honours page size and version", async () => {
    const options = { pages: [["Same"]], pageSize: [300, 400] as const, version: "1.6" };
    expect(Buffer.from(makePdf(options)).equals(Buffer.from(makePdf(options)))).toBe(true);
    const text = latin1(makePdf(options));
    expect(text.startsWith("%PDF-1.6\n")).toBe(true);
    expect(text).toContain("/MediaBox [0 0 300 400]");
  });

  test("refuses non-ASCII text instead of writing mojibake", () => {
    expect(() => makePdf({ pages: [["Счёт 1"]] })).toThrow(RangeError);
  });

  test("encryption: content is not readable in the file; user password gates opening", async () => {
    const pdf = makePdf({ pages: [["Top secret 123"]], compress: false, encrypt: { userPassword: "u", ownerPassword: "o" } });
    expect(latin1(pdf)).not.toContain("Top secret");
    await expect(readPdf(pdf)).rejects.toMatchObject({ name: "PasswordException", code: 1 });
    expect((await readPdf(pdf, { password: "u" })).pageTexts).toEqual(["Top secret 123"]);
    const ownerOnly = makePdf({ pages: [["Hello page 1"]], encrypt: { userPassword: "", ownerPassword: "o", permissions: -3904 } });
    expect((await readPdf(ownerOnly)).pageTexts).toEqual(["Hello page 1"]);
  });
});

describe("rc4", () => {
  test("matches the published test vectors (Key/Plaintext, Wiki/pedia)", () => {
    const hex = (k: string, p: string) => Buffer.from(rc4(Buffer.from(k), Buffer.from(p))).toString("hex");
    expect(hex("Key", "Plaintext")).toBe("bbf316e8d940af0ad3");
    expect(hex("Wiki", "pedia")).toBe("1021bf0420");
  });
});

describe("PNG encoder", () => {
  test("a small bomb-shaped PNG decodes to all white at its declared size", async () => {
    const png = makeBombPng(100, 50);
    const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
    expect([info.width, info.height]).toEqual([100, 50]);
    expect(data.every((v) => v === 255)).toBe(true);
  });

  test("rejects rows of the wrong length and palette images without PLTE", () => {
    expect(() => encodePng({ width: 4, height: 1, bitDepth: 8, colorType: 2, row: () => new Uint8Array(11) })).toThrow(RangeError);
    expect(() => encodePng({ width: 8, height: 1, bitDepth: 1, colorType: 3, row: () => new Uint8Array(1) })).toThrow(/palette/);
  });

  test("gray 8-bit with the Sub filter round-trips exact values", async () => {
    const row = (y: number) => Uint8Array.from({ length: 5 }, (_, x) => (x * 50 + y) & 0xff);
    const png = encodePng({ width: 5, height: 3, bitDepth: 8, colorType: 0, subFilter: true, row });
    const { data } = await sharp(png).extractChannel(0).raw().toBuffer({ resolveWithObject: true });
    expect([...data]).toEqual([...row(0), ...row(1), ...row(2)]);
  });
});

describe("makeJpeg", () => {
  test.each([3, 6, 8] as const)("orientation %i: displayed size as asked, test card upright after autoOrient", async (orientation) => {
    const jpeg = await makeJpeg(60, 40, { orientation });
    const meta = await sharp(jpeg).metadata();
    expect([meta.orientation, meta.autoOrient]).toEqual([orientation, { width: 60, height: 40 }]);
    const { data, info } = await sharp(jpeg).autoOrient().raw().toBuffer({ resolveWithObject: true });
    const px = (x: number, y: number) => [...data.subarray((y * info.width + x) * 3, (y * info.width + x) * 3 + 3)];
    const near = (got: number[], want: readonly number[]) => got.every((v, i) => Math.abs(v - want[i]!) < 50);
    expect(near(px(2, 2), CARD_COLOURS.topLeft), `top-left ${px(2, 2)}`).toBe(true);
    expect(near(px(57, 37), CARD_COLOURS.bottomRight), `bottom-right ${px(57, 37)}`).toBe(true);
  });
});

describe("makeDocx", () => {
  test("is a ZIP with the DOCX parts and the same bytes in any time zone", () => {
    const before = process.env.TZ;
    try {
      process.env.TZ = "UTC";
      const utc = makeDocx();
      process.env.TZ = "Pacific/Kiritimati"; // UTC+14: a different calendar day than UTC at midnight
      const kiritimati = makeDocx();
      expect(Buffer.from(utc).equals(Buffer.from(kiritimati))).toBe(true);
      expect(latin1(utc)).toContain("word/document.xml");
      expect(latin1(utc.subarray(0, 4))).toBe("PK\x03\x04");
    } finally {
      if (before === undefined) delete process.env.TZ;
      else process.env.TZ = before;
    }
  });
});

describe("parseManifestText", () => {
  const header = MANIFEST_COLUMNS.join("\t");
  test("parses facts, reasons and aliases; quoted text may hold ';'", () => {
    const rows = parseManifestText(
      [
        header,
        'a.pdf\tapplication/pdf\tA.pdf\tok\tpages=2; text contains "x; y"; text contains "z"; width=7; note frames=4 (4 pages)\tmade',
        "b.png\timage/png\tB.png\tok\tno text layer; height=9\tmade",
        "c.pdf\ttext/plain\tC.pdf\treject\tnot_pdf (alias unsupported_type); note\tmade",
        "",
      ].join("\r\n"),
    );
    expect(rows).toMatchObject([
      { file: "a.pdf", expected: "ok", facts: { pages: 2, textContains: ["x; y", "z"], width: 7, frames: 4 }, aliases: [] },
      { file: "b.png", facts: { noText: true, height: 9, textContains: [] } },
      { file: "c.pdf", expected: "reject", reason: "not_pdf", aliases: ["unsupported_type"] },
    ]);
    expect(rows[0]!.reason).toBeUndefined();
  });

  test.each([
    ["a wrong header", "file\treal_type\n"],
    ["a short row", `${header}\na.pdf\tapplication/pdf\tok\n`],
    ["a bad expected", `${header}\na\tb\tc\tmaybe\td\te\n`],
    ["an unknown reason", `${header}\na\tb\tc\treject\texploded; x\te\n`],
  ])("throws on %s", (_, text) => {
    expect(() => parseManifestText(text, "T.tsv")).toThrow(/^T\.tsv:\d+: /);
  });
});

const sharedFixtures = resolve(import.meta.dirname, "../..", "../shared/fixtures");
const haveShared = existsSync(resolve(sharedFixtures, "MANIFEST.tsv"));
if (!haveShared) console.log(`note: ${sharedFixtures} is absent; skipping the shared-manifest parse test`);

describe.skipIf(!haveShared)("parseManifest on ../shared/fixtures/MANIFEST.tsv", () => {
  test("reads every row with the documented facts", () => {
    const rows = parseManifest(resolve(sharedFixtures, "MANIFEST.tsv"));
    const byFile = new Map(rows.map((r) => [r.file, r]));
    expect(rows.length).toBeGreaterThanOrEqual(30);
    for (const r of rows) if (r.expected === "reject") expect(r.reason, r.file).toBeDefined();
    expect(byFile.get("pdf_text_200pages.pdf")?.facts).toMatchObject({ pages: 200, textContains: ["Ledger page 1 of 200", "Ledger page 200 of 200"] });
    expect(byFile.get("pdf_scanned_image_only.pdf")?.facts).toMatchObject({ pages: 1, noText: true, textContains: [] });
    expect(byFile.get("img_exif_orientation6.jpg")?.facts).toMatchObject({ width: 480, height: 640 });
    expect(byFile.get("img_animated.gif")?.facts).toMatchObject({ frames: 4 });
    expect(byFile.get("pdf_garbage_after_header.pdf")).toMatchObject({ reason: "corrupt", aliases: ["truncated", "not_pdf"] });
    expect(byFile.get("img_bomb_30000x30000.png")?.reason).toBe("too_many_pixels");
  });
});
