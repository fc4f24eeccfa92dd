/**
 * The status reporter over the outbox (bot/status/outbox-reporter.ts) with controlled promises: the
 * message ids intake hands over (`adopt`) resolve when the test says, so the window between `final`
 * starting and its await ending is opened on purpose. The outbox is the real one with an in-process
 * executor that records each call (seed 002: one action → one call), short intervals.
 */
import { Api } from "grammy";
import { describe, expect, test } from "vitest";
import type { FileJob } from "../../bot/db/schema.ts";
import { createLogger } from "../../bot/log.ts";
import { isMessageAction, type Action } from "../../bot/outbox/action.ts";
import type { Executor } from "../../bot/outbox/executor.ts";
import { Outbox } from "../../bot/outbox/index.ts";
import { OutboxStatusReporter } from "../../bot/status/outbox-reporter.ts";

const api = new Api("123456:TEST-token-never-used");

/** A promise the test resolves. */
function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** The calls the chat got, as `type message_id text` (a send has no message_id yet). */
function recorder() {
  const calls: string[] = [];
  let next = 900;
  const executor: Executor = {
    async execute(_api, _chatId, action: Action) {
      if (!isMessageAction(action)) return { ok: true };
      calls.push(`${action.type} ${action.messageId ?? "-"} ${action.chunk?.text ?? ""}`);
      return action.type === "send" ? { ok: true, messageId: next++ } : { ok: true };
    },
  };
  return { calls, executor };
}

/** A reporter over a real outbox (short intervals) whose calls are recorded. */
function setup(): { calls: string[]; reporter: OutboxStatusReporter } {
  const { calls, executor } = recorder();
  const outbox = new Outbox({ options: { messageIntervalMs: 10, sendIntervalMs: 10, editIntervalMs: 10, deleteIntervalMs: 10, globalPerSecond: 0, typingEnabled: false }, executor });
  return { calls, reporter: new OutboxStatusReporter(outbox, api, createLogger({ level: "silent" })) };
}

/** Everything queued on the microtask queue and one macrotask run. */
const settle = () => new Promise<void>((r) => setTimeout(r, 0));

// Only the fields the reporter reads.
const job = { id: 7, chatId: 42, messageId: 5, statusMessageId: null } as FileJob;

describe("OutboxStatusReporter", () => {
  test("a job re-armed while its old final waits for the first status message keeps the new try's entry: its status edits the new reply, shown() waits for it", async () => {
    const { calls, reporter } = setup();
    try {
      const first = deferred<number | null>();
      reporter.adopt(job, first.promise); // the accepted reply is on its way (e.g. the chat is on hold)
      const oldFinal = reporter.final(job, "Job #7 failed"); // the try failed before it arrived
      // The user sends the file again: intake re-arms the job and hands over the new reply.
      const second = deferred<number | null>();
      reporter.adopt(job, second.promise);
      first.resolve(500);
      expect(await oldFinal).toEqual({ status: "ok" });
      // The new try's first message is not in the chat yet: results must still wait for it.
      let shown = false;
      void reporter.shown(job).then(() => (shown = true));
      reporter.update(job, "Downloading… 40%");
      await settle();
      expect(shown).toBe(false);
      second.resolve(600);
      await expect.poll(() => shown).toBe(true);
      await expect.poll(() => calls).toContain("edit 600 Downloading… 40%");
      expect(await reporter.final(job, "Done")).toEqual({ status: "ok" });
      // Each message edited by its own try; no second status message sent for the new try.
      expect(calls).toEqual(["edit 500 Job #7 failed", "edit 600 Downloading… 40%", "edit 600 Done"]);
    } finally {
      await reporter.close();
    }
  });

  test("a progress update racing the final (during its await, and after it) is dropped: the chat ends on the final text", async () => {
    const { calls, reporter } = setup();
    try {
      const first = deferred<number | null>();
      reporter.adopt(job, first.promise);
      const final = reporter.final(job, "Job #7 was cancelled");
      reporter.update(job, "Processing…"); // the step had not seen the cancel yet
      first.resolve(500);
      expect(await final).toEqual({ status: "ok" });
      reporter.update(job, "Processing… 2/3");
    } finally {
      await reporter.close(); // delivers whatever is still pending
    }
    expect(calls).toEqual(["edit 500 Job #7 was cancelled"]);
  });
});
