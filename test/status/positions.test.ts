/**
 * bot/status/positions.ts: the pure rule of which waiting jobs' queue positions are edited
 * (positionEdits), and its shell (QueuePositions) with a store whose answer the test holds.
 */
import { describe, expect, test } from "vitest";
import type { FileJob } from "../../bot/db/schema.ts";
import { createLogger } from "../../bot/log.ts";
import type { Services } from "../../bot/services.ts";
import { positionEdits, QueuePositions } from "../../bot/status/positions.ts";

const job = (id: number) => ({ id }) as FileJob;
const textOf = (j: FileJob, position: number) => `#${j.id} at ${position}`;

describe("positionEdits", () => {
  test("nothing shown yet: every waiting job, in queue order, with its 1-based position", () => {
    expect(positionEdits([job(4), job(9)], new Map(), textOf)).toEqual({ show: [{ job: job(4), text: "#4 at 1" }, { job: job(9), text: "#9 at 2" }], gone: [] });
  });

  test("an unchanged position is not edited again; a job that moved up is; a job no longer waiting is forgotten", () => {
    const shown = new Map([
      [4, "#4 at 1"],
      [9, "#9 at 2"],
      [12, "#12 at 3"],
    ]);
    // 4 started its download: 9 and 12 move up; 13 is new.
    expect(positionEdits([job(9), job(12), job(13)], shown, textOf)).toEqual({
      show: [
        { job: job(9), text: "#9 at 1" },
        { job: job(12), text: "#12 at 2" },
        { job: job(13), text: "#13 at 3" },
      ],
      gone: [4],
    });
    expect(positionEdits([job(4), job(9)], shown, textOf)).toEqual({ show: [], gone: [12] });
  });
});

describe("QueuePositions", () => {
  /** A shell over a store whose listByState answers only when the test releases it; edits recorded. */
  function rig() {
    const edits: string[] = [];
    let answer: ((jobs: FileJob[]) => void) | null = null;
    let reads = 0;
    const services = {
      store: {
        listByState: () => {
          reads++;
          return new Promise<FileJob[]>((r) => (answer = r));
        },
      },
      status: { update: (job: FileJob, text: string) => void edits.push(`${job.id}: ${text}`) },
      now: () => 0,
      log: createLogger({ level: "silent" }),
    } as unknown as Pick<Services, "store" | "status" | "now" | "log">;
    const waiting = [{ id: 7, languageCode: "en", leaseUntil: null } as FileJob];
    return { positions: new QueuePositions(services, 20), edits, reads: () => reads, answer: () => answer!(waiting) };
  }

  test("a refresh that read the queue before stop() shows nothing (the process lost intake meanwhile)", async () => {
    const r = rig();
    const refresh = r.positions.refresh();
    r.positions.stop();
    r.answer();
    await refresh;
    expect(r.edits).toEqual([]);
    // Not stopped: the same answer is shown.
    const again = r.positions.refresh();
    r.answer();
    await again;
    expect(r.edits).toEqual(["7: Job #7: queued for download, position 1."]);
  });

  test("ticks while a refresh waits on the database are skipped, not stacked", async () => {
    const r = rig();
    r.positions.start();
    await Bun.sleep(120); // six intervals
    expect(r.reads()).toBe(1);
    r.answer();
    await Bun.sleep(5);
    r.positions.stop();
    expect(r.edits).toEqual(["7: Job #7: queued for download, position 1."]);
  });
});
