/**
 * `bun bench/units/resources.ts [folder] [--concurrency N]`: what the bot's systemd unit must
 * hold (issue 9 item 9, docs/sizing.md). Runs the demo (`scripts/demo.ts`: the emulator, the
 * real bot, every file of the folder sent as chat users would) and samples the bot's process
 * tree — the bot and its processing children, which stay in the unit's cgroup — every 25 ms:
 * resident memory summed over the tree, threads summed over the tree (what TasksMax counts),
 * and processes. Prints one table: idle (3 s in: the bot and its warm pool children), peak while
 * processing, and the per-child peaks.
 *
 * Default folder: ../shared/fixtures when it exists (this machine), else samples/ (run
 * `bun run samples` first). Record `uptime` next to the numbers.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

const args = process.argv.slice(2);
const concIdx = args.indexOf("--concurrency");
const concurrency = concIdx >= 0 ? Number(args[concIdx + 1]) : 2;
const folderArg = args.find((a, i) => !a.startsWith("--") && (concIdx < 0 || i !== concIdx + 1));
const shared = resolve(import.meta.dirname, "../../../shared/fixtures");
const folder = resolve(folderArg ?? (existsSync(shared) ? shared : "samples"));

/** ppid, threads and RSS (kB) of a process, or null when it has gone. */
function proc(pid: number): { ppid: number; threads: number; rssKb: number; cmd: string } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim();
    const field = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? 0);
    return { ppid: field("PPid"), threads: field("Threads"), rssKb: field("VmRSS"), cmd };
  } catch {
    return null;
  }
}

/** Every live process with its ppid (one /proc scan). */
function allProcs(): Map<number, NonNullable<ReturnType<typeof proc>>> {
  const out = new Map<number, NonNullable<ReturnType<typeof proc>>>();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    const p = proc(Number(d));
    if (p) out.set(Number(d), p);
  }
  return out;
}

const demo = Bun.spawn(["bun", "scripts/demo.ts", folder], {
  cwd: resolve(import.meta.dirname, "../.."),
  env: { ...process.env, PROCESS_CONCURRENCY: String(concurrency), LOG_LEVEL: "warn" },
  stdout: "pipe",
  stderr: "inherit",
});
let demoOut = "";
const reading = (async () => {
  for await (const chunk of demo.stdout) demoOut += new TextDecoder().decode(chunk);
})();

let botPid = 0;
let idle: { rssMb: number; threads: number; procs: number } | null = null;
const peak = { rssMb: 0, threads: 0, procs: 0, childRssMb: 0, childThreads: 0, botOnly: 0, botThreads: 0 };
const startedAt = Date.now();
let done = false;
void demo.exited.then(() => (done = true));
while (!done) {
  const procs = allProcs();
  if (!botPid) {
    for (const [pid, p] of procs) if (p.ppid === demo.pid && p.cmd.includes("bot/main.ts")) botPid = pid;
  }
  if (botPid && procs.has(botPid)) {
    const tree = [botPid];
    for (let i = 0; i < tree.length; i++) for (const [pid, p] of procs) if (p.ppid === tree[i]) tree.push(pid);
    const rssMb = tree.reduce((s, pid) => s + procs.get(pid)!.rssKb, 0) / 1024;
    const threads = tree.reduce((s, pid) => s + procs.get(pid)!.threads, 0);
    // Idle: 3 s in, the bot and its warm pool children before the demo's first file lands.
    if (!idle && Date.now() - startedAt > 3000) idle = { rssMb, threads, procs: tree.length };
    peak.rssMb = Math.max(peak.rssMb, rssMb);
    peak.threads = Math.max(peak.threads, threads);
    peak.procs = Math.max(peak.procs, tree.length);
    for (const pid of tree.slice(1)) {
      peak.childRssMb = Math.max(peak.childRssMb, procs.get(pid)!.rssKb / 1024);
      peak.childThreads = Math.max(peak.childThreads, procs.get(pid)!.threads);
    }
    const bot = procs.get(botPid)!;
    peak.botOnly = Math.max(peak.botOnly, bot.rssKb / 1024);
    peak.botThreads = Math.max(peak.botThreads, bot.threads);
  }
  await Bun.sleep(25);
}
await reading;
const code = await demo.exited;
const round = (n: number) => Math.round(n);
console.log(demoOut.split("\n").filter((l) => /jobs|ready|failed|summary/i.test(l)).slice(-3).join("\n"));
console.log(`\nfolder ${folder}, PROCESS_CONCURRENCY=${concurrency}, demo exit ${code}, ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
console.log("| what | resident MB | threads | processes |");
console.log("| --- | --- | --- | --- |");
console.log(`| bot and its warm children, idle (3 s in) | ${round(idle?.rssMb ?? 0)} | ${idle?.threads ?? 0} | ${idle?.procs ?? 0} |`);
console.log(`| bot process alone, peak | ${round(peak.botOnly)} | ${peak.botThreads} | 1 |`);
console.log(`| one processing child, peak | ${round(peak.childRssMb)} | ${peak.childThreads} | 1 |`);
console.log(`| whole tree (the unit's cgroup), peak | ${round(peak.rssMb)} | ${peak.threads} | ${peak.procs} |`);
process.exit(code === 0 ? 0 : 1);

