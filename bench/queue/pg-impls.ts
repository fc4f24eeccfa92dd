/**
 * The queues of the PostgreSQL benchmark (issue 14 item 8), opened the same way in the parent (to
 * enqueue) and in worker processes (to drain): docket's `PgJobStore` (the engine's path per job:
 * download claim → fetched → processing claim → processing → ready, bench/queue/loops.ts), pg-boss
 * (send → fetch → complete) and graphile-worker (add_job → its own worker loop, runOnce), all on one
 * PostgreSQL server; docket's `SqliteJobStore` on a WAL file as the reference. Every job carries
 * the same payload (bench/queue/payload.ts).
 */
import { openPg } from "../../bot/db/pg-open.ts";
import { PgJobStore } from "../../bot/jobs/pg-store.ts";
import { openQueue } from "./impls.ts";
import { docketLoop } from "./loops.ts";
import { benchJob } from "./payload.ts";

/** Queue implementations of the PostgreSQL benchmark. */
export type PgImpl = "docket-pg" | "pg-boss" | "graphile-worker" | "docket-sqlite";

/** pg-boss queue / graphile-worker task name. */
const NAME = "file";

/** An open queue: enqueue, drain with one loop, close. */
export interface BenchQueue {
  enqueue(i: number, chats: number): Promise<void>;
  /** Work until nothing is left; jobs this loop completed. */
  drain(owner: string): Promise<number>;
  close(): Promise<void>;
}

/**
 * Open `impl` on `target` (a PostgreSQL URL, or a SQLite file for docket-sqlite).
 * @param setup true in the parent: create the schema (pg-boss queue, graphile-worker migrations)
 */
export async function openBenchQueue(impl: PgImpl, target: string, setup: boolean): Promise<BenchQueue> {
  if (impl === "docket-sqlite") {
    const q = openQueue("docket", target);
    return { enqueue: (i, c) => q.enqueue(i, c), drain: (owner) => q.drain(1, owner), close: async () => q.close() };
  }
  if (impl === "docket-pg") {
    const db = await openPg({ url: target, poolMax: 2, statementTimeoutMs: 30_000, applicationName: "bench" });
    const store = new PgJobStore(db);
    return {
      async enqueue(i, chats) {
        await store.accept(benchJob(i, chats), Date.now());
      },
      drain: (owner) => docketLoop(store, owner),
      close: () => db.close(1),
    };
  }
  if (impl === "pg-boss") {
    const { PgBoss } = await import("pg-boss");
    const boss = new PgBoss({ connectionString: target, max: 2, supervise: false, schedule: false, migrate: setup } as never);
    boss.on("error", () => {});
    await boss.start();
    if (setup) await boss.createQueue(NAME);
    return {
      async enqueue(i, chats) {
        await boss.send(NAME, benchJob(i, chats) as never);
      },
      async drain() {
        let done = 0;
        for (;;) {
          const [job] = await boss.fetch(NAME);
          if (!job) return done;
          JSON.stringify(job.data);
          await boss.complete(NAME, job.id);
          done++;
        }
      },
      close: () => boss.stop({ graceful: false, close: true } as never),
    };
  }
  const gw = await import("graphile-worker");
  const { default: pg } = await import("pg");
  // One pool for the process, kept until close: its server backends (and their CPU) outlive the drain.
  const pgPool = new pg.Pool({ connectionString: target, max: 2 });
  pgPool.on("error", () => {}); // an idle client dropped by the server; the next query reconnects
  const utils = await gw.makeWorkerUtils({ pgPool });
  if (setup) await utils.migrate();
  return {
    async enqueue(i, chats) {
      await utils.addJob(NAME, benchJob(i, chats) as never);
    },
    async drain() {
      let done = 0;
      // graphile-worker's own loop: runOnce works until no job is left, then resolves.
      await gw.runOnce({
        pgPool,
        concurrency: 1,
        noHandleSignals: true,
        logger: new gw.Logger(() => () => {}),
        taskList: {
          [NAME]: async (payload) => {
            JSON.stringify(payload);
            done++;
          },
        },
      });
      return done;
    },
    close: async () => {
      await utils.release();
      await pgPool.end();
    },
  };
}
