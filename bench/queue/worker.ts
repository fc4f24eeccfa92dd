/**
 * A benchmark worker process: `bun bench/queue/worker.ts <docket|plainjob> <db file> <owner>`.
 * Opens the queue, says `{ ready: true }` over IPC, waits for `{ go: true }`, drains the queue
 * with one loop, says `{ done: n }` and exits. The parent times from "go" to the last "done".
 */
import { openQueue, type ImplName } from "./impls.ts";

const [impl, file, owner] = process.argv.slice(2) as [ImplName, string, string];
const q = openQueue(impl, file);
process.on("message", async (m: { go?: boolean }) => {
  if (!m.go) return;
  const done = await q.drain(1, owner);
  q.close();
  process.send!({ done });
  process.exit(0);
});
process.send!({ ready: true });
