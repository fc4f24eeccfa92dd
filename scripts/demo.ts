/**
 * `bun run demo [folder]`: the whole appliance on one machine, end to end.
 * Starts the project's Bot API emulator on 127.0.0.1 (cloud mode, Telegram's
 * rate limits on), starts the real bot (`bun run start`) against it with SQLite
 * and data under ./var/demo, sends every file of the folder as chat users would
 * (as documents, under the manifest's declared names), waits until every job has
 * ended, prints each chat's transcript and a summary table, and exits 0 only when
 * every outcome is right.
 *
 * Folder: default `samples/` (made by `bun run samples`); any folder works; with a
 * MANIFEST.tsv (e.g. ../shared/fixtures) its expected outcomes are checked.
 */
import { Database } from "bun:sqlite";
import { existsSync, readdirSync, rmSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { startEmulator, type ChatUser } from "../test/emulator/index.ts";
import { parseManifest, type ManifestRow } from "./samples/manifest.ts";
import { hasEnded, judge } from "./demo/judge.ts";
import { botEnv, spawnBot } from "./demo/bot-process.ts";

const folder = resolve(process.argv[2] ?? "samples");
const timeoutMs = Number(process.env.DEMO_TIMEOUT_MS ?? 240_000);
if (!existsSync(folder)) {
  console.error(`demo: folder ${folder} does not exist (run \`bun run samples\` to make samples/)`);
  process.exit(2);
}
const manifestPath = join(folder, "MANIFEST.tsv");
const manifest: ManifestRow[] | null = existsSync(manifestPath) ? parseManifest(manifestPath) : null;
const files = manifest
  ? manifest.map((r) => ({ file: r.file, name: r.declaredName || r.file, row: r as ManifestRow | null }))
  : readdirSync(folder)
      .filter((f) => statSync(join(folder, f)).isFile() && !f.startsWith("."))
      .sort()
      .map((f) => ({ file: f, name: f, row: null as ManifestRow | null }));

const dataDir = resolve("var/demo");
rmSync(dataDir, { recursive: true, force: true });

const em = await startEmulator({ mode: "cloud" });
console.log(`Bot API emulator on ${em.apiRoot} (cloud mode, rate limits on); data in ${dataDir}`);
const child = spawnBot(botEnv(em, dataDir));

// Chat users as in life: one person per file, Russian and English speakers alternating.
const sent: Array<{ file: string; name: string; row: ManifestRow | null; user: ChatUser; messageId: number }> = [];
for (const [i, f] of files.entries()) {
  const user = em.user({ first_name: `User${i + 1}`, language_code: i % 2 === 0 ? "en" : "ru" });
  const s = await user.sendDocument({ path: join(folder, f.file), file_name: f.name });
  sent.push({ ...f, user, messageId: s.message_id });
}
console.log(`sent ${sent.length} files from ${folder}${manifest ? " (with MANIFEST.tsv)" : ""}`);

const dbFile = join(dataDir, "db", "docket.sqlite");
type Row = { id: number; chat_id: number; message_id: number; status: string; reason: string | null; facts: string | null; last_error: string | null };
const readJobs = (): Row[] => {
  if (!existsSync(dbFile)) return [];
  const db = new Database(dbFile, { readonly: true });
  try {
    return db.query("SELECT id, chat_id, message_id, status, reason, facts, last_error FROM file_jobs").all() as Row[];
  } catch {
    return [];
  } finally {
    db.close();
  }
};
const jobFor = (rows: Row[], s: (typeof sent)[number]) => rows.find((r) => r.chat_id === s.user.chatId && r.message_id === s.messageId);

const started = Date.now();
let rows: Row[] = [];
for (;;) {
  rows = readJobs();
  const ended = sent.filter((s) => hasEnded(jobFor(rows, s)?.status));
  if (ended.length === sent.length) break;
  if (Date.now() - started > timeoutMs || child.exitCode !== null) {
    console.error(`demo: ${sent.length - ended.length} job(s) did not end${child.exitCode !== null ? ` (bot exited with ${child.exitCode})` : ` within ${timeoutMs} ms`}`);
    break;
  }
  await Bun.sleep(250);
}
// Let the final status edits land before reading the chats.
await Bun.sleep(2500);

console.log("\n=== Chat transcripts ===");
for (const s of sent) {
  console.log(`\n--- ${s.name} (${s.user.languageCode}) ---`);
  for (const line of s.user.transcript()) console.log(`  ${line}`);
}

console.log("\n=== Summary ===");
const table: Array<Record<string, string>> = [];
let wrong = 0;
for (const s of sent) {
  const job = jobFor(rows, s);
  const verdict = judge(s.row, job ? { status: job.status, reason: job.reason, facts: job.facts ? JSON.parse(job.facts) : null } : null);
  if (!verdict.right) wrong++;
  table.push({
    file: s.file,
    job: job ? String(job.id) : "-",
    status: job?.status ?? "none",
    "facts / reason": job?.status === "failed" ? `${job.reason}` : verdict.factsText,
    ...(manifest ? { expected: s.row ? `${s.row.expected}${s.row.reason ? ` (${s.row.reason})` : ""}` : "", verdict: verdict.right ? "right" : `WRONG: ${verdict.why}` } : {}),
  });
}
console.table(table);
const api429 = em.calls.filter((c) => c.status === 429).length;
console.log(`${sent.length} files, ${sent.length - wrong} right, ${wrong} wrong; ${em.calls.length} Bot API calls, ${api429} answered 429`);

child.kill("SIGTERM");
const exited = await Promise.race([child.exited, Bun.sleep(20_000).then(() => null)]);
if (exited === null) {
  console.error("demo: the bot did not stop within 20 s of SIGTERM");
  child.kill("SIGKILL");
  wrong++;
} else if (exited !== 0) {
  console.error(`demo: the bot exited with ${exited} after SIGTERM`);
  wrong++;
}
await em.close();
process.exit(wrong === 0 ? 0 : 1);
