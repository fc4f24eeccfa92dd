/**
 * `bun run janitor`: one janitor pass from the same environment as the bot
 * (for `docket-janitor.timer`). Prints the report as one JSON log line; exit 0
 * on success, 2 on bad configuration, 1 on failure.
 */
import { loadConfigForCli } from "../config.ts";
import { openDb } from "../db/open.ts";
import { SqliteJobStore } from "../jobs/sqlite-store.ts";
import { createLogger } from "../log.ts";
import { dataPaths } from "../worker/paths.ts";
import { Janitor, janitorOptions } from "./janitor.ts";

async function main(): Promise<number> {
  const config = loadConfigForCli("docket janitor");
  if (!config) return 2;
  const log = createLogger({ level: config.logLevel, token: config.token });
  const paths = dataPaths(config.dataDir);
  const db = openDb(paths.dbFile);
  try {
    const janitor = new Janitor(new SqliteJobStore(db.db), paths, log, janitorOptions(config));
    await janitor.runOnce();
    return 0;
  } catch (err) {
    log.error({ err }, "janitor pass failed");
    return 1;
  } finally {
    db.close();
  }
}

process.exit(await main());
