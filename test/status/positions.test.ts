/** positionEdits (bot/status/positions.ts): the pure rule of which waiting jobs' queue positions are edited. */
import { describe, expect, test } from "vitest";
import type { FileJob } from "../../bot/db/schema.ts";
import { positionEdits } from "../../bot/status/positions.ts";

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
