/**
 * `docket store migrate --to postgres://USER@HOST:PORT/DATABASE [--data-dir DIR] [--env FILE]`
 * (issue 14 item 7): copy this host's SQLite database (`<DATA_DIR>/db/docket.sqlite`) into an empty
 * PostgreSQL database while the bot is stopped, and verify the row count of every table
 * (bot/db/copy-to-pg.ts). The PostgreSQL schema is created by the same migrations the bot applies at
 * start, under the same advisory lock. The SQLite file is only read (brought to this release's schema
 * first, as the bot would at start), so it stays the way back (docs/scaling.md).
 *
 * The password never goes on the command line (argv is world-readable in /proc): it comes from
 * `PGPASSWORD`, or the whole URL from `DATABASE_URL` of the environment or of `--env FILE`
 * (`--to env`). A password inside `--to` is refused. Exit 0 copied and verified, 1 failed (one
 * sentence: the bot runs, the target is not empty, the server does not answer, a count differs),
 * 2 bad usage.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { copySqliteToPg, CopyRefused } from "../db/copy-to-pg.ts";
import { openDb } from "../db/open.ts";
import { describeUrl, openPg } from "../db/pg-open.ts";
import { parseEnv } from "../env-file.ts";
import { parseOptions, usageError, type Command } from "./command.ts";
import { resolveDataDir } from "./data-dir.ts";

/** The target URL with its password: `--to` plus PGPASSWORD, or DATABASE_URL (`--to env`). */
function targetUrl(to: string, envFile: string | undefined): { url: string } | { problem: string } {
  if (to === "env") {
    let url = process.env.DATABASE_URL;
    if (envFile) {
      try {
        url = parseEnv(readFileSync(envFile, "utf8")).DATABASE_URL ?? url;
      } catch (err) {
        return { problem: `cannot read ${envFile}: ${(err as Error).message}` };
      }
    }
    if (!url) return { problem: "--to env: DATABASE_URL is not set (in the environment or the --env file)" };
    return { url };
  }
  let u: URL;
  try {
    u = new URL(to);
  } catch {
    return { problem: `--to: not a URL: expected postgres://USER@HOST:PORT/DATABASE` };
  }
  if (u.protocol !== "postgres:" && u.protocol !== "postgresql:") return { problem: "--to: expected postgres://USER@HOST:PORT/DATABASE" };
  if (u.password) return { problem: "--to: put no password on the command line (other users can read it); give it in PGPASSWORD, or use --to env" };
  if (process.env.PGPASSWORD) u.password = encodeURIComponent(process.env.PGPASSWORD);
  return { url: u.toString() };
}

/** Whether a bot answers on the operator port (it must be stopped while its database is copied). */
async function botRunning(envFile: string | undefined): Promise<number | null> {
  let port = Number(process.env.HTTP_PORT ?? 8090);
  try {
    if (envFile) port = Number(parseEnv(readFileSync(envFile, "utf8")).HTTP_PORT ?? port);
  } catch {
    // no env file: the default port
  }
  if (!(port > 0)) return null;
  try {
    await fetch(`http://127.0.0.1:${port}/livez`, { signal: AbortSignal.timeout(1000) });
    return port;
  } catch {
    return null;
  }
}

/** `docket store …` */
export const storeCommand: Command = {
  usage: "docket store migrate --to postgres://USER@HOST:PORT/DATABASE|env [--data-dir DIR] [--env FILE]   (password: PGPASSWORD)",
  async run(argv) {
    const parsed = parseOptions(argv, { to: { type: "string" }, "data-dir": { type: "string" }, env: { type: "string" } });
    if (typeof parsed === "string") return usageError(this, parsed);
    const [verb, ...rest] = parsed.positionals;
    if (verb !== "migrate" || rest.length > 0 || !parsed.values.to) return usageError(this);
    const envFile = parsed.values.env;
    const target = targetUrl(parsed.values.to, envFile);
    if ("problem" in target) return usageError(this, target.problem);
    const dataDir = parsed.values["data-dir"] ? resolveDataDir(parsed.values["data-dir"]) : resolveDataDir(undefined, envFile);
    const file = join(dataDir, "db", "docket.sqlite");
    if (!existsSync(file)) {
      console.error(`docket: no SQLite database at ${file}: give the bot's DATA_DIR with --data-dir`);
      return 1;
    }
    const running = await botRunning(envFile);
    if (running !== null) {
      console.error(`docket: a bot answers on 127.0.0.1:${running}: stop it first (systemctl stop docket), then migrate`);
      return 1;
    }
    const where = describeUrl(target.url);
    const sqlite = openDb(file);
    try {
      const pg = await openPg({ url: target.url, poolMax: 2, statementTimeoutMs: 0, applicationName: "docket store migrate" });
      try {
        const copied = await copySqliteToPg(sqlite.sqlite, pg.sql);
        for (const c of copied) console.log(`${c.table.padEnd(24)} ${String(c.source).padStart(9)} → ${String(c.target).padStart(9)}  ok`);
        console.log(`copied ${file} into PostgreSQL ${where}; every row count verified. Next: set DATABASE_URL in the env file and start the bot (docs/scaling.md)`);
        return 0;
      } finally {
        await pg.close();
      }
    } catch (err) {
      const password = decodeURIComponent(new URL(target.url).password);
      const raw = String((err as Error).message ?? err);
      const message = password ? raw.replaceAll(password, "***") : raw;
      console.error(`docket: ${err instanceof CopyRefused ? "" : `PostgreSQL ${where}: `}${message}`);
      return 1;
    } finally {
      sqlite.close();
    }
  },
};
