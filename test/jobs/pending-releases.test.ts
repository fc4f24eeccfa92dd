/**
 * PendingReleases (bot/worker/releases.ts; issue 14 item 8): the budget release after `ready` rides on
 * the process's next claim, or is written alone one tick later; a claim that throws gives its releases
 * back; a release written alone that fails is logged once, stays pending and is tried again.
 */
import { describe, expect, test } from "vitest";
import { createLogger } from "../../bot/log.ts";
import { PendingReleases } from "../../bot/worker/releases.ts";

/** A store whose releaseReservation records each call, failing while `down` is set. */
function recordingStore() {
  const calls: number[] = [];
  const store = {
    down: false,
    calls,
    async releaseReservation(id: number): Promise<boolean> {
      if (store.down) throw new Error("connection refused");
      calls.push(id);
      return true;
    },
  };
  return store;
}

/** A logger whose lines land in `lines` (parsed). */
function recordingLog() {
  const lines: Array<Record<string, unknown>> = [];
  return { lines, log: createLogger({ level: "info", write: (l) => void lines.push(JSON.parse(l) as Record<string, unknown>) }) };
}

const tick = () => new Promise((r) => setTimeout(r, 5));

describe("PendingReleases", () => {
  test("a claim right after carries every pending release, and none goes alone", async () => {
    const store = recordingStore();
    const r = new PendingReleases(store, recordingLog().log);
    r.add(3);
    r.add(7);
    const carried = await r.carry(async (release) => [...release]);
    expect(carried).toEqual([3, 7]);
    expect(r.pending).toEqual([]);
    await tick();
    expect(store.calls).toEqual([]);
    // Nothing pending: the next claim carries nothing.
    expect(await r.carry(async (release) => [...release])).toEqual([]);
  });

  test("no claim within a tick: written alone, once each", async () => {
    const store = recordingStore();
    const r = new PendingReleases(store, recordingLog().log);
    r.add(5);
    r.add(5);
    r.add(6);
    expect(store.calls).toEqual([]);
    await tick();
    expect(store.calls).toEqual([5, 6]);
    expect(r.pending).toEqual([]);
  });

  test("a claim that throws released nothing: its releases are pending again and go alone", async () => {
    const store = recordingStore();
    const r = new PendingReleases(store, recordingLog().log);
    r.add(4);
    await expect(r.carry(async () => Promise.reject(new Error("statement timeout")))).rejects.toThrow("statement timeout");
    expect(r.pending).toEqual([4]);
    await tick();
    expect(store.calls).toEqual([4]);
  });

  test("a release written alone while the database is down: one warning, kept, carried or written once it answers", async () => {
    const store = recordingStore();
    const { lines, log } = recordingLog();
    const r = new PendingReleases(store, log);
    store.down = true;
    r.add(8);
    await tick();
    expect(r.pending).toEqual([8]);
    expect(lines.filter((l) => l.level === 40).map((l) => [l.msg, l.jobs])).toEqual([
      ["could not release the budget of finished jobs: the database did not answer; trying again (the janitor releases them otherwise)", [8]],
    ]);
    store.down = false;
    expect(await r.carry(async (release) => [...release])).toEqual([8]);
    await r.close();
    expect(store.calls).toEqual([]);
  });

  test("close writes what is pending before the store closes", async () => {
    const store = recordingStore();
    const r = new PendingReleases(store, recordingLog().log, 60_000);
    r.add(1);
    r.add(2);
    await r.close();
    expect(store.calls).toEqual([1, 2]);
    expect(r.pending).toEqual([]);
  });
});
