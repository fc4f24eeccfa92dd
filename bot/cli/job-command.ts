/**
 * `docket job N`: one job as the operator needs it — its row (state, reason, sizes, lease, times, last
 * error) and its history of tries (bot/jobs/attempts.ts: time, step, try, outcome, reason, detail; kept
 * across re-arms, issue 11 item 5). Reads the database read-only through the JobStore.
 *
 *   docket job N [--json] [--data-dir DIR]
 * Exit 0 when shown, 1 when there is no such job or no database (the sentence names it), 2 on bad usage.
 */
import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { drizzle } from "drizzle-orm/bun-sqlite";
import * as schema from "../db/schema.ts";
import type { FileJob, JobAttempt } from "../db/schema.ts";
import { SqliteJobStore } from "../jobs/sqlite-store.ts";
import { dataPaths } from "../worker/paths.ts";
import { parseOptions, usageError, type Command } from "./command.ts";
import { resolveDataDir } from "./data-dir.ts";

/** The text `docket job N` prints for `job` and its `attempts` (English, one fact per line). */
export function describeJob(job: FileJob, attempts: readonly JobAttempt[]): string {
  const size = (n: number | null) => (n === null ? "unknown" : `${n} B`);
  const lines = [
    `job ${job.id} · ${job.status}${job.reason ? ` (${job.reason})` : ""} · chat ${job.chatId} · user ${job.userId} · message ${job.messageId} · update ${job.updateId}`,
    `file: ${job.source} ${JSON.stringify(job.declaredName ?? "")} ${job.declaredMime ?? "(no type)"} · declared ${size(job.declaredSize)} · on disk ${size(job.realSize)}${job.sha256 ? ` · sha256 ${job.sha256}` : ""} · variant ${job.variant}`,
    `tries: ${job.attempts} · lease: ${job.leaseOwner ? `${job.leaseOwner} until ${job.leaseUntil}` : "none"}${job.notBefore ? ` · not before ${job.notBefore}` : ""} · reserved ${job.reservedBytes} B`,
    `created ${job.createdAt} · updated ${job.updatedAt}${job.finishedAt ? ` · finished ${job.finishedAt}` : ""}${job.resultExpiresAt ? ` · result kept until ${job.resultExpiresAt}` : ""}`,
  ];
  if (job.lastError) lines.push(`last error: ${job.lastError}`);
  lines.push(attempts.length === 0 ? "history: none" : `history (${attempts.length}):`);
  for (const a of attempts) lines.push(`  ${a.at}  ${a.step.padEnd(10)}  try ${String(a.attempt).padEnd(3)} ${a.outcome.padEnd(11)}  ${a.reason.padEnd(18)}  ${a.detail}`);
  return lines.join("\n");
}

/** `docket job N …` */
export const jobCommand: Command = {
  usage: "docket job N [--json] [--data-dir DIR]",
  async run(argv) {
    const parsed = parseOptions(argv, { json: { type: "boolean", default: false }, "data-dir": { type: "string" } });
    if (typeof parsed === "string") return usageError(this, parsed);
    const [n, ...rest] = parsed.positionals;
    const id = Number(/^#?(\d{1,12})$/.exec(n ?? "")?.[1] ?? NaN);
    if (rest.length > 0 || !Number.isSafeInteger(id)) return usageError(this, n === undefined ? undefined : `not a job number: ${JSON.stringify(n)}`);
    const dataDir = resolveDataDir(parsed.values["data-dir"]);
    const file = dataPaths(dataDir).dbFile;
    if (!existsSync(file)) {
      console.error(`docket job: no database at ${file}: is DATA_DIR right (--data-dir, or DATA_DIR in docket.env)?`);
      return 1;
    }
    // Read-only: the operator's shell (often root) must not create files the bot's user cannot write.
    const sqlite = new Database(file, { readonly: true });
    try {
      const store = new SqliteJobStore(drizzle(sqlite, { schema }));
      const job = await store.get(id);
      if (!job) {
        console.error(`docket job: there is no job ${id} in ${file}`);
        return 1;
      }
      const attempts = await store.attempts(id);
      console.log(parsed.values.json ? JSON.stringify({ job, attempts }, null, 2) : describeJob(job, attempts));
      return 0;
    } catch (err) {
      console.error(`docket job: cannot read ${file}: ${(err as Error).message} (a database from an older docket is migrated when the bot starts)`);
      return 1;
    } finally {
      sqlite.close();
    }
  },
};
