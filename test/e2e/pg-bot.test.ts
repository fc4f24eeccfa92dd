/**
 * The whole bot on the PostgreSQL store (issue 14 item 1): `DATABASE_URL` selects it, the database is
 * migrated at start, and a chat user's PDF goes accepted → ready through a real PostgreSQL server
 * (test/support/pg-server.ts) and the project's emulator. The URL's password never reaches a log line.
 */
import { describe, expect, test } from "vitest";
import { makePdf } from "../../scripts/samples/index.ts";
import { PG_PASSWORD, usePgServer, type PgServer } from "../support/pg-server.ts";
import { freshPgDatabase } from "../support/pg-store.ts";
import { toolReady } from "../support/tools.ts";
import { withStack } from "../support/with-stack.ts";

describe.skipIf(!toolReady("postgres"))("the bot on PostgreSQL", () => {
  let server: PgServer;
  usePgServer((s) => (server = s));

  test("DATABASE_URL: a PDF from a chat ends ready with its results, the rows in PostgreSQL, no SQLite file", async () => {
    const url = await freshPgDatabase(server);
    await withStack({ env: { DATABASE_URL: url } }, async (s) => {
      expect(s.app.database.kind).toBe("postgres");
      expect(s.app.db).toBeNull();
      const alice = s.em.user({ language_code: "en" });
      const sent = await alice.sendDocument({ bytes: await makePdf({ pages: [["Hello from PostgreSQL"]] }), file_name: "pg.pdf", mime_type: "application/pdf" });
      const job = await s.waitJob((await s.jobFor(alice.chatId, sent.message_id)).id);
      expect(job.status).toBe("ready");
      const results = await s.app.services.store.results(job.id);
      expect(results.map((r) => r.fileName)).toEqual(["pg.txt", "pg-page1.jpg"]);
      expect(results.every((r) => r.telegramFileId !== null)).toBe(true);
      await alice.waitFor((m) => m.some((x) => x.text?.startsWith(`Done, job #${job.id}`)), 10_000);
      // The row is in PostgreSQL, read through another connection.
      const [row] = await s.app.database.pg!.sql<{ status: string }[]>`SELECT status FROM file_jobs WHERE id = ${job.id}`;
      expect(row?.status).toBe("ready");
      expect(await Bun.file(`${s.config.dataDir}/db/docket.sqlite`).exists()).toBe(false);
      expect(s.logs.join("\n")).not.toContain(PG_PASSWORD);
    });
  });
});
