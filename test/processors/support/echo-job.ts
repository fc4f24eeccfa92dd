/**
 * A job type for the pool tests (pool option `modules`): `test-echo` reports `steps` progress
 * events and answers with its payload, the child's pid and the variables it can see.
 */
import { registerJob } from "../../../processors/pool/jobs.ts";
import { ProcessingError } from "../../../processors/types.ts";

declare module "../../../processors/pool/protocol.ts" {
  interface JobTypes {
    "test-echo": { payload: { text: string; steps: number; refuse?: boolean }; result: { text: string; pid: number } };
  }
}

registerJob("test-echo", async ({ text, steps, refuse }, ctx) => {
  if (refuse) throw new ProcessingError("corrupt", { ext: "bin", label: "test", size: "none" }, "refused on request");
  for (let i = 1; i <= steps; i++) ctx.progress({ done: i, total: steps, stage: "echo" });
  return { text: text.toUpperCase(), pid: process.pid };
});
