/**
 * Child-process probe for BR-03 (b): runs the local-mode fetcher on one path, as
 * whatever user the parent started it as (e.g. `setpriv --reuid=65534`), and
 * prints `{ ok, failure?, logs }` as JSON. Args: <botApiDir> <filePath> <destPath>.
 */
import type { Api } from "grammy";
import { FetchError } from "../../bot/fetch/errors.ts";
import { localFetcher } from "../../bot/fetch/local.ts";
import { createLogger } from "../../bot/log.ts";

const [botApiDir, filePath, destPath] = process.argv.slice(2) as [string, string, string];
const logs: string[] = [];
const api = { getFile: async () => ({ file_id: "F", file_unique_id: "U", file_path: filePath }) } as unknown as Api;
try {
  const f = await localFetcher(api, botApiDir, createLogger({ write: (l) => void logs.push(l) }))({ jobId: 1, fileId: "F", declaredSize: null, destPath, limit: 1 << 30 });
  console.log(JSON.stringify({ ok: true, size: f.size, logs }));
} catch (err) {
  console.log(JSON.stringify({ ok: false, failure: err instanceof FetchError ? err.failure : String(err), logs }));
}
