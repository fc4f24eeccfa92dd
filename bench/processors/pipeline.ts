/**
 * Section "pipeline" of bench/processors: the processing step as the bot runs it. The real bot
 * (`bun bot/main.ts`, scripts/demo/bot-process.ts) against the project's Bot API emulator; every
 * file of the shared fixture set is sent as a document by its own new chat user, round after
 * round (new users, so nothing is answered from an earlier round's result); the step's time is the
 * `ms` of the bot's `processed` log line (bot/worker/process-step.ts: from handing the file to the
 * pool to its result). Only processed files log that line; refused ones (14 of the 36) do not.
 */
import { Database } from "bun:sqlite";
import { cpus } from "node:os";
import { join } from "node:path";
import { startEmulator } from "../../test/emulator/index.ts";
import { REPO_ROOT, botEnv } from "../../scripts/demo/bot-process.ts";
import { hasEnded } from "../../scripts/demo/judge.ts";
import { parseManifest } from "../../scripts/samples/manifest.ts";
import { median, percentile } from "../queue/stats.ts";
import { fmt, load } from "./measure.ts";

/** One `processed` line. */
interface Processed {
  readonly ms: number;
  readonly type: string;
}

/** Collect the bot's `processed` lines from its stdout (JSON lines) into `into`; `onReady` per warm child. */
async function readLog(stream: ReadableStream<Uint8Array>, into: Processed[], onReady: () => void): Promise<void> {
  const decoder = new TextDecoder();
  let buf = "";
  for await (const chunk of stream) {
    buf += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (!line.includes('"processed"') && !line.includes("processor child ready")) continue;
      try {
        const o = JSON.parse(line) as { msg?: string; ms?: number; type?: string };
        if (o.msg === "processor child ready") onReady();
        if (o.msg === "processed" && typeof o.ms === "number") into.push({ ms: o.ms, type: o.type ?? "?" });
      } catch {
        // not a JSON line
      }
    }
  }
}

/** Run the section: `rounds` rounds of the whole fixture set; returns the markdown. */
export async function pipelineSection(fixtures: string, rounds: number, scratch: string): Promise<string> {
  const rows = parseManifest(join(fixtures, "MANIFEST.tsv"));
  const dataDir = join(scratch, "pipeline-data");
  const em = await startEmulator({ mode: "cloud", rateLimits: false });
  const bot = Bun.spawn(["bun", "--no-env-file", "bot/main.ts"], {
    cwd: REPO_ROOT,
    // debug: the pool's "processor child ready" lines say when start-up has warmed every child.
    env: botEnv(em, dataDir, { LOG_LEVEL: "debug", USER_MAX_JOBS_IN_FLIGHT: "1000" }),
    stdout: "pipe",
    stderr: "ignore",
  });
  const lines: Processed[] = [];
  let warm = 0;
  const reading = readLog(bot.stdout, lines, () => warm++);
  const perRound: Processed[][] = [];
  const loads: string[] = [load()];
  try {
    // As a running bot meets its first files: every child warm (the pool starts them at start-up).
    for (const deadline = Date.now() + 120_000; warm < cpus().length && Date.now() < deadline; ) await Bun.sleep(50);
    for (let r = 0; r < rounds; r++) {
      const before = lines.length;
      const sent: { chatId: number; messageId: number }[] = [];
      for (const [i, row] of rows.entries()) {
        const user = em.user({ first_name: `Bench${r}-${i}`, language_code: "en" });
        const s = await user.sendDocument({ path: join(fixtures, row.file), file_name: row.declaredName || row.file });
        sent.push({ chatId: user.chatId, messageId: s.message_id });
      }
      const dbFile = join(dataDir, "db", "docket.sqlite");
      for (const deadline = Date.now() + 300_000; Date.now() < deadline; ) {
        let jobs: { chat_id: number; message_id: number; status: string }[] = [];
        try {
          const db = new Database(dbFile, { readonly: true });
          jobs = db.query("SELECT chat_id, message_id, status FROM file_jobs").all() as typeof jobs;
          db.close();
        } catch {
          // the bot has not created or migrated its database yet
        }
        const ended = sent.filter((s) => hasEnded(jobs.find((j) => j.chat_id === s.chatId && j.message_id === s.messageId)?.status)).length;
        if (ended === sent.length) break;
        await Bun.sleep(100);
      }
      await Bun.sleep(300); // the last lines reach the pipe
      perRound.push(lines.slice(before));
      loads.push(load());
    }
  } finally {
    bot.kill("SIGTERM");
    await Promise.race([bot.exited, Bun.sleep(20_000)]);
    await reading.catch(() => undefined);
    await em.close();
  }
  const steady = perRound.slice(1).flat();
  const out = [
    `Bot: \`bun bot/main.ts\` with the defaults (PROCESS_CONCURRENCY = cores), emulator in this process, first round sent once every child was warm, ${rows.length} fixtures per round × ${rounds} rounds, all files of a round sent at once. Load average at the start and after each round: ${loads.join(" → ")}.`,
    "",
    "| rounds | `processed` lines | median ms | p90 ms | max ms | median ms, PDFs | median ms, images |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
  ];
  const line = (label: string, xs: readonly Processed[]): string => {
    const ms = xs.map((x) => x.ms);
    const pdf = xs.filter((x) => x.type === "application/pdf").map((x) => x.ms);
    const img = xs.filter((x) => x.type.startsWith("image/")).map((x) => x.ms);
    return `| ${label} | ${xs.length} | ${fmt(median(ms))} | ${fmt(percentile(ms, 90))} | ${fmt(Math.max(...ms))} | ${fmt(median(pdf))} | ${fmt(median(img))} |`;
  };
  out.push(line("1 (first files on the children warmed at start-up)", perRound[0] ?? []));
  if (steady.length) out.push(line(`2–${rounds}`, steady));
  out.push(line("all", perRound.flat()));
  return out.join("\n");
}
