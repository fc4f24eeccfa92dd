/**
 * The two queues under test, opened the same way in the parent and in worker processes:
 * docket's `SqliteJobStore` over `openDb` (WAL, synchronous NORMAL, busy_timeout 5000, migrations)
 * and plainjob over bun:sqlite (its own pragmas: WAL, synchronous NORMAL, busy_timeout 5000).
 */
import { Database } from "bun:sqlite";
import { bun as plainjobBun, defineQueue } from "plainjob";
import { openDb } from "../../bot/db/open.ts";
import { SqliteJobStore } from "../../bot/jobs/sqlite-store.ts";
import { docketLoop, plainjobLoop, silent } from "./loops.ts";
import { seedDocketHistory, seedPlainjobHistory } from "./history.ts";
import { benchJob } from "./payload.ts";

/** Queue implementations in the benchmark. */
export type ImplName = "docket" | "plainjob";

/** plainjob job type used for every benchmark job. */
const TYPE = "file";

/** An open queue: enqueue one job, run `loops` concurrent worker loops, close. */
export interface OpenQueue {
  /** Enqueue job `i` (see {@link benchJob}). */
  enqueue(i: number, chats: number): Promise<void>;
  /** Run `loops` async worker loops on this connection until the queue is drained; returns jobs completed. */
  drain(loops: number, owner: string): Promise<number>;
  close(): void;
}

/**
 * Open `impl` on the SQLite file `file` (created and migrated when missing).
 * @param history finished rows to insert first (see history.ts); 0 in worker processes
 * @throws whatever bun:sqlite throws when the file cannot be opened
 */
export function openQueue(impl: ImplName, file: string, history = 0): OpenQueue {
  if (impl === "docket") {
    const db = openDb(file);
    seedDocketHistory(db.sqlite, history);
    const store = new SqliteJobStore(db.db);
    return {
      async enqueue(i, chats) {
        await store.accept(benchJob(i, chats), Date.now());
      },
      async drain(loops, owner) {
        const counts = await Promise.all(Array.from({ length: loops }, (_, k) => docketLoop(store, `${owner}-${k}`)));
        return counts.reduce((a, b) => a + b, 0);
      },
      close: () => db.close(),
    };
  }
  const sqlite = new Database(file, { create: true, strict: true });
  const queue = defineQueue({ connection: plainjobBun(sqlite), logger: silent });
  seedPlainjobHistory(sqlite, history, TYPE);
  return {
    async enqueue(i, chats) {
      queue.add(TYPE, benchJob(i, chats));
    },
    async drain(loops) {
      const counts = await Promise.all(Array.from({ length: loops }, () => plainjobLoop(queue, TYPE)));
      return counts.reduce((a, b) => a + b, 0);
    },
    close() {
      queue.close();
      sqlite.close();
    },
  };
}

/**
 * After a drain: every benchmark job is final exactly once — docket: `ready` with `attempts` 1
 * (a second claim of the same job would have raised it), plainjob: status done.
 * @throws when the counts differ from `jobs`
 */
export function verifyDrained(impl: ImplName, file: string, jobs: number): void {
  const sqlite = new Database(file, { readonly: true });
  try {
    const sql =
      impl === "docket"
        ? "SELECT count(*) AS n FROM file_jobs WHERE status = 'ready' AND attempts = 1"
        : "SELECT count(*) AS n FROM plainjob_jobs WHERE type = 'file' AND status = 2 AND data NOT LIKE '{\"old\":%'";
    const n = (sqlite.query(sql).get() as { n: number }).n;
    if (n !== jobs) throw new Error(`${impl}: ${n} of ${jobs} jobs final exactly once`);
  } finally {
    sqlite.close();
  }
}
