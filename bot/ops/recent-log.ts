/**
 * The bot's recent journal lines at warning and above, kept in memory (issue 10 item 6: `docket
 * status` shows the errors of the last hour; `docket_log_lines_total{level}`). The logger hands
 * every line it writes to {@link RecentLog.note}; only warn+ lines are parsed and kept (the last
 * {@link KEEP}), so info traffic costs one regex.
 */

/** Lines kept at most. */
export const KEEP = 500;

/** pino level numbers by name, and back. */
const LEVEL_NAMES: Readonly<Record<number, "warn" | "error" | "fatal">> = { 40: "warn", 50: "error", 60: "fatal" };

/** One kept line. */
export interface RecentLine {
  /** Epoch ms. */
  readonly at: number;
  readonly level: "warn" | "error" | "fatal";
  readonly msg: string;
}

/** Warn+ lines of this process and their counts since the start. */
export class RecentLog {
  /** Lines written since the start, by level. */
  readonly counts: Record<"warn" | "error" | "fatal", number> = { warn: 0, error: 0, fatal: 0 };
  private readonly lines: RecentLine[] = [];

  /** @param now clock, epoch ms */
  constructor(private readonly now: () => number = Date.now) {}

  /** Take one journal line (a pino JSON line, already redacted). */
  note(line: string): void {
    const level = LEVEL_NAMES[Number(/"level":(\d+)/.exec(line)?.[1] ?? 0)];
    if (!level) return;
    this.counts[level]++;
    let msg = "";
    try {
      msg = String((JSON.parse(line) as { msg?: unknown }).msg ?? "");
    } catch {
      msg = line.slice(0, 200);
    }
    this.lines.push({ at: this.now(), level, msg });
    if (this.lines.length > KEEP) this.lines.shift();
  }

  /** Kept lines at `levels` written at or after `sinceMs` (epoch ms), oldest first. */
  since(sinceMs: number, levels: ReadonlyArray<RecentLine["level"]> = ["error", "fatal"]): RecentLine[] {
    return this.lines.filter((l) => l.at >= sinceMs && levels.includes(l.level));
  }
}
