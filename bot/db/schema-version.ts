/**
 * Which schema a database is at, against the migrations this release ships (issue 14, faults: "a
 * schema that is newer than the release refuses to start, naming both versions").
 *
 * drizzle's migrator records each applied migration in `__drizzle_migrations` as (hash, created_at),
 * created_at being the migration's `when` from `meta/_journal.json`; it applies every journal entry
 * newer than the newest recorded one and silently does nothing when the database is ahead. A
 * database migrated by a newer release (a rollback of the code without a restore) would then run
 * an old release's statements against columns it does not know. {@link checkSchemaVersion} refuses
 * that before anything is migrated or written.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** One migration of a release (an entry of `meta/_journal.json`). */
export interface JournalEntry {
  readonly idx: number;
  /** drizzle's folderMillis: the migration's creation time, epoch ms; stored as `created_at` when applied. */
  readonly when: number;
  /** File name without `.sql`, e.g. `0002_claim_indexes`. */
  readonly tag: string;
}

/** The migrations shipped in `dir` (a drizzle-kit output folder), oldest first. */
export function readJournal(dir: string): JournalEntry[] {
  const journal = JSON.parse(readFileSync(join(dir, "meta", "_journal.json"), "utf8")) as { entries: JournalEntry[] };
  return [...journal.entries].sort((a, b) => a.when - b.when);
}

/** Thrown when the database was migrated by a newer release; the message names both versions and the way out. */
export class SchemaTooNewError extends Error {
  constructor(
    /** What the database has: applied migrations and the newest one's created_at (epoch ms). */
    readonly database: { readonly applied: number; readonly newestAt: number },
    /** What this release knows: its newest migration. */
    readonly release: JournalEntry & { readonly count: number },
    where: string,
  ) {
    super(
      `the ${where} schema is newer than this release: it has ${database.applied} migration(s) applied, the newest created ${new Date(database.newestAt).toISOString()}, ` +
        `which this release does not know; this release knows ${release.count} migration(s) up to ${release.tag} (created ${new Date(release.when).toISOString()}). ` +
        "Start the release that migrated it (or restore the backup taken before that upgrade: docs/upgrading.md)",
    );
    this.name = "SchemaTooNewError";
  }
}

/**
 * Refuse a database that has a migration newer than every migration of this release.
 * @param applied `created_at` of every migration recorded in the database (epoch ms; any order)
 * @param journal this release's migrations ({@link readJournal})
 * @param where names the database in the message (`SQLite database <file>`, `PostgreSQL database`)
 * @throws SchemaTooNewError when the database is ahead of the release
 */
export function checkSchemaVersion(applied: readonly number[], journal: readonly JournalEntry[], where: string): void {
  if (applied.length === 0 || journal.length === 0) return;
  const newestAt = Math.max(...applied);
  const newest = journal[journal.length - 1]!;
  if (newestAt > newest.when) throw new SchemaTooNewError({ applied: applied.length, newestAt }, { ...newest, count: journal.length }, where);
}
