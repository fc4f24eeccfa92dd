/**
 * `docket status`, the pure half (issue 10 item 6): everything the operator screen shows, as one
 * document, rendered to at most a screenful of plain lines. The I/O half (bot/cli/status-command.ts)
 * gathers the document from the running bot's `/status`, the database and the backup status file.
 */
import type { BackupStatus } from "../backup/status.ts";
import type { BotReport } from "../ops/report.ts";

/** The whole screen's data. */
export interface StatusDocument {
  /** Epoch ms when it was gathered. */
  readonly now: number;
  /** The bot's answer, or why there is none (`no answer on 127.0.0.1:8090`). */
  readonly bot: BotReport | { readonly down: string };
  /** Read from the database (present when it could be opened). */
  readonly db: {
    readonly jobs: Readonly<Record<string, number>>;
    readonly budgetInUse: number;
    readonly failedLastHour: Readonly<Record<string, number>>;
    readonly alertsLastHour: ReadonlyArray<{ readonly cause: string; readonly state: string; readonly createdAt: string }>;
  } | { readonly error: string };
  readonly budgetTotal: number;
  readonly dataDir: string;
  /** Free bytes on the data filesystem, or null when it could not be read. */
  readonly diskFree: number | null;
  readonly backup: BackupStatus;
}

const MB = 1024 * 1024;
const STATES = ["accepted", "fetched", "processing", "ready", "failed", "expired"];

/** `2026-12-01 21:00 UTC` */
function utc(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** `12 s ago`, `5 min ago`, `3.2 h ago`, `2 d ago` */
function ago(ms: number, now: number): string {
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 120) return `${s} s ago`;
  if (s < 7200) return `${Math.round(s / 60)} min ago`;
  if (s < 172_800) return `${Math.round(s / 360) / 10} h ago`;
  return `${Math.round(s / 86_400)} d ago`;
}

/** Is the bot up, alive and ready (the exit status of `docket status`)? */
export function isHealthy(doc: StatusDocument): boolean {
  if ("down" in doc.bot || doc.bot.phase !== "running") return false;
  return [...Object.values(doc.bot.readiness), ...Object.values(doc.bot.liveness)].every((c) => c.ok);
}

/** Render the document: one line per concern, failing checks spelled out. */
export function renderStatus(doc: StatusDocument): string[] {
  const { now } = doc;
  const out: string[] = [];
  const row = (label: string, text: string) => out.push(`${label.padEnd(9)} ${text}`);
  if ("down" in doc.bot) {
    out.push(`docket: the bot is NOT RUNNING (${doc.bot.down}); see: systemctl status docket; journalctl -u docket -n 50`);
  } else {
    const b = doc.bot;
    const failing = Object.entries(b.readiness).filter(([, c]) => !c.ok);
    const state = b.phase !== "running" ? b.phase.toUpperCase() : failing.length ? "running, NOT READY" : "running, ready";
    out.push(`docket ${b.version} (${b.commit}) on ${b.host}: ${state}`);
    out.push(`          ${b.mode} mode, ${b.intake === "webhook" ? "webhook" : "long polling"}, ${b.store}; pid ${b.pid} since ${utc(Date.parse(b.startedAt))}`);
    const ok = Object.entries(b.readiness).filter(([, c]) => c.ok).map(([n]) => n);
    row("health", failing.length === 0 ? `ok: ${ok.join(", ")}` : `${failing.length} failing${ok.length ? ` (ok: ${ok.join(", ")})` : ""}`);
    for (const [name, c] of failing) out.push(`          ✗ ${name}: ${c.detail}`);
    for (const [name, c] of Object.entries(b.liveness)) if (!c.ok) out.push(`          ✗ ${name} (liveness): ${c.detail}`);
    const update = b.lastUpdateAt ? `last update ${ago(Date.parse(b.lastUpdateAt), now)}` : "no update yet";
    const intakeOk = b.lastIntakeOkAt ? `; last ${b.intake === "webhook" ? "webhook call" : "getUpdates answer"} ${ago(Date.parse(b.lastIntakeOkAt), now)}` : "";
    row("intake", update + intakeOk);
  }
  if ("error" in doc.db) row("jobs", `database not readable: ${doc.db.error}`);
  else {
    const j = doc.db.jobs;
    row("jobs", `${STATES.map((s) => `${s} ${j[s] ?? 0}`).join(" · ")} (waiting ${(j.accepted ?? 0) + (j.fetched ?? 0)})`);
    const pct = doc.budgetTotal > 0 ? Math.round((doc.db.budgetInUse / doc.budgetTotal) * 100) : 0;
    const free = doc.diskFree === null ? "" : `; ${Math.floor(doc.diskFree / MB)} MB free on ${doc.dataDir}`;
    row("budget", `${Math.ceil(doc.db.budgetInUse / MB)} MB of ${Math.floor(doc.budgetTotal / MB)} MB reserved (${pct} %)${free}`);
  }
  if (!("down" in doc.bot)) row("chats", `${doc.bot.chatsOnHold} on hold after a 429; outbox queue ${doc.bot.outboxQueue}`);
  const { backup: b, verify: v } = doc.backup;
  const backupText = !b
    ? "no backup has run yet"
    : b.ok
      ? `last good ${utc(b.at * 1000)} (${ago(b.at * 1000, now)}, ${Math.ceil(b.bytes / MB)} MB, ${b.where})`
      : `LAST BACKUP FAILED ${utc(b.at * 1000)}${b.error ? `: ${b.error}` : ""}`;
  const verifyText = !v ? "; never verified" : v.ok ? `; verify passed ${utc(v.at * 1000)}` : `; VERIFY FAILED ${utc(v.at * 1000)}${v.error ? `: ${v.error}` : ""}`;
  row("backup", backupText + verifyText);
  const parts: string[] = [];
  if (!("error" in doc.db)) {
    const failed = Object.entries(doc.db.failedLastHour);
    const n = failed.reduce((a, [, c]) => a + c, 0);
    parts.push(n === 0 ? "no failed jobs" : `${n} failed job${n === 1 ? "" : "s"} (${failed.map(([r, c]) => `${r} ${c}`).join(", ")})`);
    const alerts = doc.db.alertsLastHour;
    if (alerts.length) parts.push(`alerts: ${alerts.map((a) => `${a.cause} ${a.state}`).join(", ")}`);
  }
  if (!("down" in doc.bot)) parts.push(`${doc.bot.errors.count} error line${doc.bot.errors.count === 1 ? "" : "s"} in the journal`);
  row("errors", `last hour: ${parts.join("; ")}`);
  if (!("down" in doc.bot)) for (const e of doc.bot.errors.last) out.push(`          ${e.at.slice(11, 19)} ${e.level}: ${e.msg.length > 110 ? `${e.msg.slice(0, 109)}…` : e.msg}`);
  return out;
}
