/**
 * The deadline of one filesystem call (bot/fetch/deadline.ts): the caller stops waiting when it passes or
 * the signal aborts, and a value that arrives later is handed over for cleanup (a late file handle is closed).
 */
import { describe, expect, test } from "vitest";
import { FsDeadlineError, withDeadline } from "../../bot/fetch/deadline.ts";

/** A promise and its resolver. */
function later<T>(): { p: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const p = new Promise<T>((r) => (resolve = r));
  return { p, resolve };
}

describe("withDeadline", () => {
  test("a call that returns in time gives its value", async () => {
    expect(await withDeadline(Promise.resolve(7), 1000, "stat x")).toBe(7);
  });

  test("a call past its deadline: FsDeadlineError naming the call; its late value goes to onLate", async () => {
    const op = later<string>();
    const late: string[] = [];
    const err = await withDeadline(op.p, 50, "open /x", undefined, (v) => late.push(v)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FsDeadlineError);
    expect((err as Error).message).toBe("open /x did not return within 50 ms");
    op.resolve("handle");
    await expect.poll(() => late).toEqual(["handle"]);
  });

  test("the signal ends the wait with its reason", async () => {
    const ac = new AbortController();
    const waiting = withDeadline(later<number>().p, 60_000, "read /x", ac.signal);
    ac.abort(new Error("cancelled"));
    await expect(waiting).rejects.toThrow("cancelled");
  });

  test("the call's own error passes through", async () => {
    await expect(withDeadline(Promise.reject(new Error("EACCES")), 1000, "open /x")).rejects.toThrow("EACCES");
  });
});
