/**
 * The list of docket's own samples (samples/ and samples/MANIFEST.tsv): what each file is, what the
 * bot must do with it, and how to make it. Mirrors the kinds in ../shared/fixtures/MANIFEST.tsv and
 * the inputs of docs field cases (BR-08, BR-09, BR-14..BR-18, BR-21), small enough to commit.
 */
import { prependJunk, garbageAfterHeader, insertAfterHeader, randomBytes, truncate } from "./damage.ts";
import { makeDocx, makeTextInvoice, makeXxeSvg } from "./documents.ts";
import { makeAnimated, makeJpeg, makePng, makeScanJpeg } from "./images.ts";
import type { ManifestLine, ManifestReason, SampleFacts } from "./manifest.ts";
import { makePdf } from "./pdf.ts";
import { makeBombPng } from "./png.ts";

/** One sample: its manifest columns in structured form plus the generator of its bytes. */
export interface SampleSpec {
  /** File name in the output folder. */
  readonly file: string;
  /** MIME by content, or `unknown`. */
  readonly realType: string;
  /** Name a user would send it under (sometimes misleading on purpose). */
  readonly declaredName: string;
  /** `ok` or `reject`. */
  readonly expected: "ok" | "reject";
  /** For `reject`: the reason; written as the first word of the detail. */
  readonly reason?: ManifestReason;
  /** Facts written into the detail (and checked by test/samples). */
  readonly facts: Omit<SampleFacts, "textContains"> & { readonly textContains?: readonly string[] };
  /** Free-text notes appended to the detail (`;`-separated). */
  readonly notes: readonly string[];
  /** The `how_made` column. */
  readonly howMade: string;
  /** Makes the file's bytes; deterministic. */
  readonly make: () => Promise<Uint8Array> | Uint8Array;
}

/** A4, A5, A6 and Letter page sizes in pt (ISO 216 rounded; ANSI Letter). */
const A4 = [595, 842] as const;
const A5 = [420, 595] as const;
const A6 = [298, 420] as const;
const LETTER = [612, 792] as const;

const helloPages = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) => [`${prefix} page ${i + 1}`, `docket sample, page ${i + 1} of ${count}`]);

/** The 800x600 test-card JPEG: the `ok` photo and, cut in half, the truncated one. */
const photo = () => makeJpeg(800, 600, { quality: 80 });

/** A `reject` sample: the reason goes first in the detail; a refused file promises no facts. */
const reject = (reason: ManifestReason, row: Omit<SampleSpec, "expected" | "reason" | "facts">): SampleSpec => ({
  ...row,
  expected: "reject",
  reason,
  facts: {},
});

/** All samples, in manifest order (ok first, then reject). */
export const SAMPLES: readonly SampleSpec[] = [
  {
    file: "pdf_text_3pages.pdf",
    realType: "application/pdf",
    declaredName: "base.pdf",
    expected: "ok",
    facts: { pages: 3, textContains: ["Hello page 1", "Hello page 2", "Hello page 3"] },
    notes: ["A4 595x842 pt", "Helvetica text, FlateDecode content streams", "PDF version 1.4", "the base.pdf of the field cases"],
    howMade: 'makePdf({pages: [["Hello page N", "docket sample, page N of 3"] x3]}) in scripts/samples/pdf.ts',
    make: () => makePdf({ pages: helloPages("Hello", 3), pageSize: A4 }),
  },
  {
    file: "pdf_text_1page.pdf",
    realType: "application/pdf",
    declaredName: "Invoice_4812.pdf",
    expected: "ok",
    facts: { pages: 1, textContains: ["Invoice 4812", "Total due: 1,250.00 EUR"] },
    notes: ["A4 595x842 pt", "PDF version 1.5"],
    howMade: "makePdf: one page of invoice lines, version 1.5",
    make: () =>
      makePdf({
        pages: [["Invoice 4812", "Example Logistics Ltd., Riga", "Freight Berlin-Riga   1   1,250.00 EUR", "Total due: 1,250.00 EUR"]],
        pageSize: A4,
        version: "1.5",
      }),
  },
  {
    file: "pdf_text_200pages.pdf",
    realType: "application/pdf",
    declaredName: "ledger_2023.pdf",
    expected: "ok",
    facts: { pages: 200, textContains: ["Ledger page 1 of 200", "Ledger page 200 of 200"] },
    notes: ["A5 420x595 pt", "FlateDecode content streams", "many progress ticks"],
    howMade: 'makePdf: 200 pages ["Ledger page N of 200", "Balance carried: ..."], A5',
    make: () =>
      makePdf({
        pages: Array.from({ length: 200 }, (_, i) => [`Ledger page ${i + 1} of 200`, `Balance carried: ${(1000 + i * 12.5).toFixed(2)} EUR`]),
        pageSize: A5,
      }),
  },
  {
    file: "pdf_junk_before_header.pdf",
    realType: "application/pdf",
    declaredName: "quote.pdf",
    expected: "ok",
    facts: { pages: 1, textContains: ["Quote Q-2291"] },
    notes: ["%PDF- header at byte offset 512 after Latin-1 junk (readers accept it within the first 1024 bytes)", "xref offsets count from the header"],
    howMade: "prependJunk(makePdf(quote), 512) in scripts/samples/damage.ts",
    make: () => prependJunk(makePdf({ pages: [["Quote Q-2291", "Valid until 2024-03-31. Amount: 980.00 EUR"]], pageSize: A4 }), 512),
  },
  {
    file: "pdf_broken_xref_recoverable.pdf",
    realType: "application/pdf",
    declaredName: "statement_3315.pdf",
    expected: "ok",
    facts: { pages: 2, textContains: ["Statement 3315"] },
    notes: ["every xref offset and startxref wrong by 46 bytes (a comment line inserted after the header)", "pdf.js reconstructs the xref"],
    howMade: "insertAfterHeader(makePdf(statement, 2 pages), 46-byte % comment line)",
    make: () =>
      insertAfterHeader(
        makePdf({ pages: [["Statement 3315", "Opening balance 200.00; page 1 of 2"], ["Statement 3315", "Closing balance 410.00; page 2 of 2"]] }),
        Buffer.from(`%${"inserted after writing; xref not updated".padEnd(44, ".")}\n`, "latin1"),
      ),
  },
  {
    file: "pdf_scanned_image_only.pdf",
    realType: "application/pdf",
    declaredName: "scan_0001.pdf",
    expected: "ok",
    facts: { pages: 1, noText: true },
    notes: ["one 425x550 DeviceGray DCTDecode image (sharp JPEG of bars standing in for text) over the page", "Letter 612x792 pt"],
    howMade: "makeScanJpeg(425, 550) (sharp, b-w, q60); makePdf({pages: [[]], images: [jpeg]})",
    make: async () => makePdf({ pages: [[]], images: [await makeScanJpeg(425, 550)], pageSize: LETTER, idSeed: "scan_0001" }),
  },
  {
    file: "pdf_encrypted_empty_userpw.pdf",
    realType: "application/pdf",
    declaredName: "price_list.pdf",
    expected: "ok",
    facts: { pages: 1, textContains: ["Price List 2024-B"] },
    notes: ["encrypted RC4 40-bit (Standard security handler R2) with an EMPTY user password", "owner password owner-pw-2024B, /P -60 (print only)", "opens without a password"],
    howMade: 'makePdf({encrypt: {userPassword: "", ownerPassword: "owner-pw-2024B", permissions: -60}}) in scripts/samples/pdf-crypt.ts',
    make: () =>
      makePdf({
        pages: [["Price List 2024-B", "Pallet storage: 4.20 EUR per day"]],
        encrypt: { userPassword: "", ownerPassword: "owner-pw-2024B", permissions: -60 },
      }),
  },
  {
    file: "mislabeled_pdf_as_photo.jpg",
    realType: "application/pdf",
    declaredName: "photo.jpg",
    expected: "ok",
    facts: { pages: 1, textContains: ["Receipt 2207"] },
    notes: ["detected as application/pdf despite the .jpg name", "A6 298x420 pt"],
    howMade: "makePdf(receipt, A6), saved under a .jpg name",
    make: () => makePdf({ pages: [["Receipt 2207", "Paid: 18.40 EUR"]], pageSize: A6, fontSize: 10 }),
  },
  {
    file: "img_rgb.jpg",
    realType: "image/jpeg",
    declaredName: "IMG_4812.jpg",
    expected: "ok",
    facts: { width: 800, height: 600 },
    notes: ["baseline JPEG, YCbCr, no EXIF", "test card: gradient, red #d00000 square top-left, blue #0000d0 square bottom-right"],
    howMade: "makeJpeg(800, 600, {quality: 80}) (sharp) in scripts/samples/images.ts",
    make: photo,
  },
  {
    file: "img_progressive.jpg",
    realType: "image/jpeg",
    declaredName: "holiday.jpg",
    expected: "ok",
    facts: { width: 320, height: 240 },
    notes: ["progressive JPEG (SOF2)"],
    howMade: "makeJpeg(320, 240, {progressive: true}) (sharp)",
    make: () => makeJpeg(320, 240, { progressive: true }),
  },
  {
    file: "img_exif_orientation6.jpg",
    realType: "image/jpeg",
    declaredName: "IMG_20240101_120000.jpg",
    expected: "ok",
    facts: { width: 240, height: 320 },
    notes: [
      "orientation-corrected: stored 320x240 with EXIF Orientation=6 (rotate 90 CW)",
      "after correction the top-left square is red #d00000 and the bottom-right blue #0000d0",
    ],
    howMade: "makeJpeg(240, 320, {orientation: 6}): sharp rotate(270) then withMetadata({orientation: 6})",
    make: () => makeJpeg(240, 320, { orientation: 6 }),
  },
  {
    file: "img_cmyk.jpg",
    realType: "image/jpeg",
    declaredName: "print_proof.jpg",
    expected: "ok",
    facts: { width: 160, height: 120 },
    notes: ["4 components CMYK (Adobe APP14), no ICC profile", "all black: after CMYK to sRGB every channel mean < 40 (not inverted)"],
    howMade: 'makeJpeg(160, 120, {cmyk: true, fill: [0, 0, 0]}): sharp toColourspace("cmyk")',
    make: () => makeJpeg(160, 120, { cmyk: true, fill: [0, 0, 0] }),
  },
  {
    file: "img_rgba.png",
    realType: "image/png",
    declaredName: "stamp.png",
    expected: "ok",
    facts: { width: 320, height: 240 },
    notes: ["PNG 8-bit RGBA (colour type 6)", "corners fully transparent (alpha 0)", "teal disc alpha 204 (0xcc)"],
    howMade: "makePng(320, 240, {alpha: true}) (sharp)",
    make: () => makePng(320, 240, { alpha: true }),
  },
  {
    file: "img_16bit.png",
    realType: "image/png",
    declaredName: "gradient_scan.png",
    expected: "ok",
    facts: { width: 256, height: 192 },
    notes: ["PNG 16-bit RGB (colour type 2, bit depth 16), no alpha", "pixel (x, y) red = x*256+y"],
    howMade: "makePng(256, 192, {bitDepth: 16}): encodePng in scripts/samples/png.ts",
    make: () => makePng(256, 192, { bitDepth: 16 }),
  },
  {
    file: "img_animated.gif",
    realType: "image/gif",
    declaredName: "reaction.gif",
    expected: "ok",
    facts: { width: 64, height: 48, frames: 3 },
    notes: ["GIF89a, loop forever, 200 ms per frame", "frames red, lime, blue", "never report a height of 144"],
    howMade: "makeAnimated(64, 48) (sharp raw frames with pageHeight, gif({loop: 0, delay}))",
    make: () => makeAnimated(64, 48),
  },
  {
    file: "img_animated.webp",
    realType: "image/webp",
    declaredName: "animation.webp",
    expected: "ok",
    facts: { width: 64, height: 48, frames: 3 },
    notes: ["animated lossless WebP (VP8X + ANIM/ANMF)", "frames red, lime, blue"],
    howMade: 'makeAnimated(64, 48, {format: "webp"}) (sharp)',
    make: () => makeAnimated(64, 48, { format: "webp" }),
  },
  {
    file: "mislabeled_png_as_contract.pdf",
    realType: "image/png",
    declaredName: "contract.pdf",
    expected: "ok",
    facts: { width: 10, height: 10 },
    notes: ["detected as image/png despite the .pdf name", "solid red, PNG 8-bit RGB, no %PDF header anywhere"],
    howMade: "makePng(10, 10, {fill: [255, 0, 0]}) (sharp), saved under a .pdf name",
    make: () => makePng(10, 10, { fill: [255, 0, 0] }),
  },
  reject("empty", {
    file: "empty.pdf",
    realType: "unknown",
    declaredName: "scan.pdf",
    notes: ["0 bytes"],
    howMade: "empty file",
    make: () => new Uint8Array(0),
  }),
  reject("empty", {
    file: "pdf_zero_pages.pdf",
    realType: "application/pdf",
    declaredName: "empty_form.pdf",
    notes: ["well-formed PDF whose page tree has /Kids [] /Count 0", "pdf.js opens it with numPages 0"],
    howMade: "makePdf({pages: []})",
    make: () => makePdf({ pages: [] }),
  }),
  reject("not_pdf", {
    file: "text_as_invoice.pdf",
    realType: "text/plain",
    declaredName: "invoice.pdf",
    notes: ['(alias unsupported_type)', 'plain ASCII text that mentions "Invoice 4812" but has no %PDF header'],
    howMade: "makeTextInvoice() in scripts/samples/documents.ts",
    make: makeTextInvoice,
  }),
  reject("not_pdf", {
    file: "mislabeled_docx_as_report.pdf",
    realType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    declaredName: "report.pdf",
    notes: ["(alias unsupported_type)", "a ZIP container (PK 03 04) holding a minimal DOCX"],
    howMade: "makeDocx(): fflate zipSync of [Content_Types].xml, _rels/.rels, word/document.xml",
    make: () => makeDocx(),
  }),
  reject("truncated", {
    file: "pdf_truncated.pdf",
    realType: "application/pdf",
    declaredName: "policy_schedule.pdf",
    notes: ["first half of a 3-page PDF", "no %%EOF, startxref, trailer or page tree", "pdf.js: Invalid PDF structure"],
    howMade: "truncate(makePdf(policy, 3 pages), 0.5)",
    make: () => truncate(makePdf({ pages: helloPages("Policy schedule", 3) })),
  }),
  reject("corrupt", {
    file: "pdf_garbage_after_header.pdf",
    realType: "application/pdf",
    declaredName: "report.pdf",
    notes: ["only the 15-byte %PDF-1.7 header is real, then 6000 seeded random bytes (no objects, no xref, no %%EOF)", "(alias: truncated/not_pdf acceptable)"],
    howMade: "garbageAfterHeader(\"1.7\", 6000, seed 4812) in scripts/samples/damage.ts",
    make: () => garbageAfterHeader(),
  }),
  reject("encrypted", {
    file: "pdf_password_protected.pdf",
    realType: "application/pdf",
    declaredName: "memo.pdf",
    notes: ["RC4 40-bit (Standard security handler R2), user password required (it is userpw-66, for checking only)", "pdf.js: PasswordException code 1 (No password given)"],
    howMade: 'makePdf({encrypt: {userPassword: "userpw-66", ownerPassword: "ownerpw-66"}})',
    make: () => makePdf({ pages: [["Memo 66", "Internal only"]], encrypt: { userPassword: "userpw-66", ownerPassword: "ownerpw-66" } }),
  }),
  reject("truncated", {
    file: "img_truncated.jpg",
    realType: "image/jpeg",
    declaredName: "contract_photo.jpg",
    notes: ["first half of the 800x600 baseline JPEG img_rgb.jpg, no EOI (FF D9) marker", "header still says 800x600", "sharp decode: premature end of JPEG image"],
    howMade: "truncate(makeJpeg(800, 600, {quality: 80}), 0.5)",
    make: async () => truncate(await photo()),
  }),
  reject("too_many_pixels", {
    file: "img_bomb_30000x30000.png",
    realType: "image/png",
    declaredName: "wallpaper.png",
    notes: ["header says 30000x30000 (900 megapixels), 1-bit palette, all white", "must be refused from the header before decoding", "sharp metadata(): Input image exceeds pixel limit"],
    howMade: "makeBombPng(30000, 30000): encodePng, IHDR bit depth 1 colour type 3, zero rows, zlib level 9",
    make: () => makeBombPng(30_000, 30_000),
  }),
  reject("unsupported_type", {
    file: "img_svg_xxe.svg",
    realType: "image/svg+xml",
    declaredName: "logo.svg",
    notes: ['SVG whose DOCTYPE declares an external entity SYSTEM "file:///etc/passwd" used in a <text>', "must not be parsed with entity resolution"],
    howMade: "makeXxeSvg() in scripts/samples/documents.ts",
    make: makeXxeSvg,
  }),
  reject("unsupported_type", {
    file: "random_bytes.bin",
    realType: "unknown",
    declaredName: "IMG_0042.jpg",
    notes: ["8192 seeded pseudo-random bytes (mulberry32 seed 77), first two bytes 5a 13, no known signature"],
    howMade: "randomBytes(8192, seed 77) in scripts/samples/damage.ts",
    make: () => randomBytes(8192, 77),
  }),
];

/**
 * The `expected_detail` text of a sample: for `reject` the reason first, for `ok` the facts
 * (`pages=`, `text contains "..."`, `no text layer`, `width=`, `height=`, `frames=`), then the notes.
 */
export function sampleDetail(spec: SampleSpec): string {
  const parts: string[] = [];
  if (spec.expected === "reject") parts.push(spec.reason ?? "");
  const f = spec.facts;
  if (f.pages !== undefined) parts.push(`pages=${f.pages}`);
  for (const t of f.textContains ?? []) parts.push(`text contains "${t}"`);
  if (f.noText) parts.push("no text layer");
  if (f.width !== undefined) parts.push(`width=${f.width}`);
  if (f.height !== undefined) parts.push(`height=${f.height}`);
  if (f.frames !== undefined) parts.push(`frames=${f.frames}`);
  // "(alias ...)" notes attach to the reason word, as in the shared manifest.
  const [aliases, rest] = [spec.notes.filter((n) => n.startsWith("(alias")), spec.notes.filter((n) => !n.startsWith("(alias"))];
  if (aliases.length > 0 && parts.length > 0) parts[0] = `${parts[0]} ${aliases.join(" ")}`;
  return [...parts, ...rest].join("; ");
}

/** The manifest row of a sample. */
export function sampleLine(spec: SampleSpec): ManifestLine {
  return {
    file: spec.file,
    realType: spec.realType,
    declaredName: spec.declaredName,
    expected: spec.expected,
    detail: sampleDetail(spec),
    howMade: spec.howMade,
  };
}
