/**
 * The verdict of a restore drill (`docket backup verify`, issue 10 item 5), from facts gathered by
 * ./verify.ts. Pure: facts in, one verdict out.
 *
 * A restored backup is good when:
 * - `PRAGMA integrity_check` of the restored database answers `ok`;
 * - every drizzle migration it has applied is one the running release ships, with the same
 *   hash (a migration the release does not know means the backup needs a newer release; a newer
 *   one of the release is applied when the bot opens the restored file, and is only noted);
 * - with the same migrations, it has the same tables as the live database;
 * - `file_jobs`, which only grows (docs/operations.md: a job's row is kept when it expires), has no
 *   more rows in the backup than in the live database (more means another database, or a live
 *   database that lost rows). Other tables may shrink (job_results rows go with their results) and
 *   are only shown.
 */

/** Rows of one table in the restored backup and in the live database (null: no such table there). */
export interface TableCount {
  readonly table: string;
  readonly backup: number | null;
  readonly live: number | null;
}

/** A row of drizzle's `__drizzle_migrations`. */
export interface AppliedMigration {
  readonly createdAt: number;
  readonly hash: string;
}

/** A migration the running release ships (journal `when` and `tag`, SHA-256 of the SQL file). */
export interface ReleaseMigration {
  readonly when: number;
  readonly tag: string;
  readonly hash: string;
}

/** What the drill found. */
export interface VerifyFacts {
  /** Which backup: e.g. `docket-20261130T031512Z` or `restic snapshot 1a2b3c4d (docket-…)`. */
  readonly source: string;
  /** The backup's creation time (MANIFEST created_at), epoch ms; null when unknown. */
  readonly createdAt: number | null;
  readonly now: number;
  /** First lines of `PRAGMA integrity_check` of the restored database. */
  readonly integrity: string;
  readonly applied: readonly AppliedMigration[];
  readonly release: { readonly id: string; readonly migrations: readonly ReleaseMigration[] };
  /** null when there is no live database to compare with (a new host before its first start). */
  readonly counts: readonly TableCount[] | null;
}

/** The drill's result: `line` is the one line printed; `error` the failure's cause for the status file. */
export interface Verdict {
  readonly ok: boolean;
  readonly line: string;
  readonly error?: string;
}

/** The append-only table whose row count a backup can never exceed. */
export const GROWING_TABLE = "file_jobs";

function age(ms: number): string {
  const h = ms / 3_600_000;
  return h < 1 ? `${Math.max(0, Math.round(ms / 60_000))} min` : h < 48 ? `${Math.round(h)} h` : `${Math.round(h / 24)} days`;
}

/** Judge the facts of one drill. */
export function judgeRestore(f: VerifyFacts): Verdict {
  const when = f.createdAt === null ? "" : `, taken ${new Date(f.createdAt).toISOString().slice(0, 16).replace("T", " ")} UTC (${age(f.now - f.createdAt)} ago)`;
  const head = `${f.source}${when}`;
  const failed = (error: string): Verdict => ({ ok: false, line: `backup verify: FAILED ${head}: ${error}`, error });

  if (f.integrity.trim() !== "ok") return failed(`integrity_check: ${f.integrity.trim().split("\n").slice(0, 3).join("; ")}`);

  const byWhen = new Map(f.release.migrations.map((m) => [m.when, m]));
  for (const a of f.applied) {
    const known = byWhen.get(a.createdAt);
    if (!known) return failed(`the backup has applied a migration release ${f.release.id} does not ship (created_at ${a.createdAt}): restore it with the release that made it`);
    if (known.hash !== a.hash) return failed(`migration ${known.tag} of the backup differs from release ${f.release.id}'s file (other SQL, same name)`);
  }
  const appliedWhen = new Set(f.applied.map((a) => a.createdAt));
  const pending = f.release.migrations.filter((m) => !appliedWhen.has(m.when));
  const latest = [...f.applied].sort((x, y) => y.createdAt - x.createdAt)[0];
  const latestTag = latest ? byWhen.get(latest.createdAt)!.tag : "none";
  const migrations =
    pending.length === 0
      ? `migrations: ${latestTag}, as release ${f.release.id} expects`
      : `migrations: ${latestTag}; release ${f.release.id} applies ${pending.map((m) => m.tag).join(", ")} when it opens it`;

  let rows = "no live database to compare with";
  if (f.counts) {
    if (pending.length === 0) {
      const onlyOne = f.counts.filter((c) => c.backup === null || c.live === null);
      if (onlyOne.length > 0) {
        const names = onlyOne.map((c) => `${c.table} (${c.backup === null ? "live only" : "backup only"})`).join(", ");
        return failed(`the tables differ from the live database with the same migrations: ${names}`);
      }
    }
    const grow = f.counts.find((c) => c.table === GROWING_TABLE);
    if (grow && grow.backup !== null && grow.live !== null && grow.backup > grow.live) {
      return failed(`${GROWING_TABLE} has ${grow.backup} rows in the backup but ${grow.live} in the live database, and it only grows: this is not a backup of this database, or the live one lost rows`);
    }
    rows = `rows backup/live: ${f.counts
      .filter((c) => c.backup !== null)
      .map((c) => `${c.table} ${c.backup}/${c.live ?? "-"}`)
      .join(", ")}`;
  }
  return { ok: true, line: `backup verify: OK ${head}: integrity ok; ${rows}; ${migrations}` };
}
