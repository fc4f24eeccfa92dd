/** The store conformance suites (test/jobs/conformance/) against the SQLite JobStore on a real file. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDb, type OpenDb } from "../../bot/db/open.ts";
import { SqliteJobStore } from "../../bot/jobs/sqlite-store.ts";
import { coreSuite } from "./conformance/core.ts";
import { opsReadSuite } from "./conformance/ops.ts";
import { historySuite } from "./conformance/history.ts";
import { intakeSuite } from "./conformance/intake.ts";
import { reclaimSuite } from "./conformance/reclaim.ts";
import { finalsSuite } from "./conformance/finals.ts";
import { sourceSuite } from "./conformance/source.ts";
import { albumPartsSuite } from "./conformance/album-parts.ts";
import type { StoreFactory } from "./conformance/store-factory.ts";

/** A fresh SQLite database in a temp folder per test; its twin is a second handle on the same file. */
const sqlite: StoreFactory = () => {
  const dir = mkdtempSync(join(tmpdir(), "docket-conf-"));
  const file = join(dir, "db", "docket.sqlite");
  const db = openDb(file);
  const others: OpenDb[] = [];
  return {
    store: new SqliteJobStore(db.db),
    async twin() {
      const o = openDb(file);
      others.push(o);
      return new SqliteJobStore(o.db);
    },
    close: () => {
      for (const o of others) o.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
};

coreSuite("sqlite", sqlite);
reclaimSuite("sqlite", sqlite);
opsReadSuite("sqlite", sqlite);
intakeSuite("sqlite", sqlite);
sourceSuite("sqlite", sqlite);
albumPartsSuite("sqlite", sqlite);
historySuite("sqlite", sqlite);
finalsSuite("sqlite", sqlite);
