/**
 * Reading Prometheus text exposition (what `/metrics` serves) in tests: the families it declares
 * (`# TYPE` lines) and the value of one sample.
 */

/** Family names declared by `# TYPE <name> <type>` lines, in order. */
export function families(text: string): string[] {
  return [...text.matchAll(/^# TYPE (\S+) \S+$/gm)].map((m) => m[1]!);
}

/** Family name → type (`counter`, `gauge`, `histogram`, `summary`). */
export function familyTypes(text: string): Map<string, string> {
  return new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
}

/**
 * The value of the sample `name{labels}` (labels given exactly, in any order), or undefined.
 * @example sample(text, "docket_jobs", { state: "ready" })
 */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) got[l[1]!] = l[2]!;
    const want = Object.entries(labels);
    if (want.length === Object.keys(got).length && want.every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return undefined;
}
