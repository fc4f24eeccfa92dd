/** The store conformance suites (test/jobs/conformance/) against the SQLite JobStore on a real file. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDb } from "../../bot/db/open.ts";
import { SqliteJobStore } from "../../bot/jobs/sqlite-store.ts";
import { opsReadSuite } from "./conformance/ops.ts";
import { historySuite } from "./conformance/history.ts";
import { intakeSuite } from "./conformance/intake.ts";
import { reclaimSuite } from "./conformance/reclaim.ts";
import { sourceSuite } from "./conformance/source.ts";
import { albumPartsSuite } from "./conformance/album-parts.ts";
import type { StoreFactory } from "./conformance/store-factory.ts";

/** A fresh SQLite database in a temp folder per test. */
const sqlite: StoreFactory = () => {
  const dir = mkdtempSync(join(tmpdir(), "docket-conf-"));
  const db = openDb(join(dir, "db", "docket.sqlite"));
  return {
    store: new SqliteJobStore(db.db),
    close: () => {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
};

reclaimSuite("sqlite", sqlite);
opsReadSuite("sqlite", sqlite);
intakeSuite("sqlite", sqlite);
sourceSuite("sqlite", sqlite);
albumPartsSuite("sqlite", sqlite);
historySuite("sqlite", sqlite);
