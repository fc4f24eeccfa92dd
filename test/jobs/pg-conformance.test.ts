/**
 * The store conformance suites (test/jobs/conformance/) against the PostgreSQL JobStore on a real
 * server (issue 14 item 2): Debian's postgresql, started for this file in a throwaway directory on a
 * free port as an unprivileged user, stopped after (test/support/pg-server.ts). No mock.
 */
import { describe } from "vitest";
import { toolReady } from "../support/tools.ts";
import { usePgServer, type PgServer } from "../support/pg-server.ts";
import { pgStoreFactory } from "../support/pg-store.ts";
import { coreSuite } from "./conformance/core.ts";
import { intakeSuite } from "./conformance/intake.ts";
import { historySuite } from "./conformance/history.ts";
import { albumPartsSuite } from "./conformance/album-parts.ts";
import { sourceSuite } from "./conformance/source.ts";
import { opsReadSuite } from "./conformance/ops.ts";
import { reclaimSuite } from "./conformance/reclaim.ts";
import { finalsSuite } from "./conformance/finals.ts";

describe.skipIf(!toolReady("postgres"))("PostgreSQL store conformance", () => {
  let server: PgServer;
  usePgServer((s) => (server = s));
  const pg = pgStoreFactory(() => server);
  coreSuite("postgres", pg);
  reclaimSuite("postgres", pg);
  opsReadSuite("postgres", pg);
  intakeSuite("postgres", pg);
  historySuite("postgres", pg);
  albumPartsSuite("postgres", pg);
  sourceSuite("postgres", pg);
  finalsSuite("postgres", pg);
});
