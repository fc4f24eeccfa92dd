/**
 * `bun run janitor`: one janitor pass from the same environment as the bot
 * (for `docket-janitor.timer`). Prints the report as one JSON log line; exit 0
 * on success, 2 on bad configuration, 1 on failure.
 */
import { loadConfigForCli } from "../config.ts";
import { openStore } from "../open-store.ts";
import { LOCKS } from "../db/pg-locks.ts";
import { createLogger } from "../log.ts";
import { dataPaths } from "../worker/paths.ts";
import { Janitor, janitorOptions } from "./janitor.ts";

async function main(): Promise<number> {
  const config = loadConfigForCli("docket janitor");
  if (!config) return 2;
  const log = createLogger({ level: config.logLevel, token: config.token });
  const paths = dataPaths(config.dataDir);
  const db = await openStore(config, paths.dbFile, "docket janitor");
  try {
    const janitor = new Janitor(db.store, paths, log, janitorOptions(config), Date.now, (fn) => db.once(LOCKS.expiry, fn));
    await janitor.runOnce();
    return 0;
  } catch (err) {
    log.error({ err }, "janitor pass failed");
    return 1;
  } finally {
    await db.close();
  }
}

process.exit(await main());
