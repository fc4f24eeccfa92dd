/** Chat holds after 429s (field case BR-06): one registry for the outbox, uploads and plain calls. */
import { expect, test } from "vitest";
import { ChatHolds } from "../../bot/deliver/chat-holds.ts";

test("a hold lasts until retry_after has passed, keeps the later deadline, and is counted once per hold period", () => {
  let now = 1_000_000;
  const started: Array<[string, number]> = [];
  const holds = new ChatHolds(() => now, (chat, until) => started.push([chat, until]));
  holds.note(5, now + 2000); // the raw 429 seen by the transformer
  holds.note(5, now + 2000); // the same hold reported by the outbox's ChatHold event
  holds.note("5", now + 1000); // an earlier deadline never shortens the hold
  expect(holds.heldUntil(5)).toBe(1_002_000);
  expect(started).toEqual([["5", 1_002_000]]);
  holds.note(7, now + 500); // another chat is its own hold
  expect(started.map(([c]) => c)).toEqual(["5", "7"]);
  now += 2000;
  expect(holds.heldUntil(5)).toBe(0); // over exactly at the deadline
  holds.note(5, now + 3000); // a new 429 after the hold ended is a new hold
  expect(started.map(([c]) => c)).toEqual(["5", "7", "5"]);
  holds.note(9, now - 1); // a deadline already past holds nothing and counts nothing
  expect([holds.heldUntil(9), started.length]).toEqual([0, 3]);
});

test("wait() resolves at once for a free chat and after the deadline for a held one", async () => {
  const holds = new ChatHolds();
  await holds.wait(1);
  holds.note(1, Date.now() + 150);
  let done = false;
  const w = holds.wait(1).then(() => (done = true));
  await Bun.sleep(20);
  expect(done).toBe(false);
  await w;
  expect(holds.heldUntil(1)).toBe(0);
});
