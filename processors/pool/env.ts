/**
 * The environment of a processing child (issue 11 item 6, CONTRACTS.md §8): a short allowlist
 * copied from the bot's own, never the whole of it. The bot's environment holds BOT_TOKEN and
 * WEBHOOK_SECRET; a child parses untrusted files and needs neither.
 */

/**
 * Variables a child inherits when the bot has them: the search path (for tools such as
 * Tesseract), locale and time zone, the temp directory, and where Tesseract's language data is
 * when the operator moved it (`TESSDATA_PREFIX`). Everything else is dropped.
 */
export const CHILD_ENV_KEYS: readonly string[] = Object.freeze(["PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "TESSDATA_PREFIX"]);

/**
 * Build a child's environment.
 * @param parent the bot's environment (default `process.env`)
 * @param extra variables a processor needs (e.g. `TESSDATA_PREFIX`); never secrets
 * @returns only {@link CHILD_ENV_KEYS} present in `parent`, plus `extra`
 */
export function childEnv(parent: Record<string, string | undefined> = process.env, extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of CHILD_ENV_KEYS) {
    const v = parent[key];
    if (v !== undefined) env[key] = v;
  }
  return { ...env, ...extra };
}
