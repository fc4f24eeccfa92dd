/**
 * Whether the Debian tools that make scans at test time are present (scripts/samples/scans.ts):
 * imagemagick, libtiff-tools, img2pdf, libopenjp2-tools. Prints one `skipped:` line naming the
 * missing packages when they are not, as the fresh-machine rule asks (HELPERS.md "Test tools").
 */
const TOOLS: ReadonlyArray<readonly [string, string]> = [
  ["convert", "imagemagick"],
  ["tiffcp", "libtiff-tools"],
  ["tiff2pdf", "libtiff-tools"],
  ["img2pdf", "img2pdf"],
  ["opj_compress", "libopenjp2-tools"],
];

/** True when every scan-making tool is on PATH; otherwise prints which Debian packages `suite` needs. */
export function scanToolsReady(suite: string): boolean {
  const missing = [...new Set(TOOLS.filter(([bin]) => !Bun.which(bin)).map(([, pkg]) => pkg))];
  if (missing.length === 0) return true;
  console.log(`skipped: ${suite}: needs Debian package(s) ${missing.join(", ")}`);
  return false;
}
