/**
 * The byte budget of downloads in flight (seed 000: "Бюджет в байтах, а не в
 * количестве задач"), as pure functions. The running sum lives in the database
 * (`file_jobs.reserved_bytes`), so a restart never forgets a reservation.
 */

/**
 * Bytes a job reserves before its download: declared size × multiplier; when the size is unknown,
 * the current mode's download limit × multiplier, as a sized file that large would reserve (seed 000:
 * "резервируйте консервативно, по верхней границе вашего собственного лимита"; issue 11 item 5). At
 * least `floor` bytes, because outputs have a size of their own (a 2 KB PDF still gets a ~100 KB page
 * preview). Never more than the whole budget, so one huge job can still run alone.
 */
export function reservationFor(declaredSize: number | null, multiplier: number, modeLimit: number, budget: number, floor = 0): number {
  const size = declaredSize !== null && declaredSize >= 0 ? declaredSize : modeLimit;
  return Math.min(budget, Math.max(1, floor, Math.ceil(size * multiplier)));
}

/**
 * The refined reservation once the real size is known (after download): real size × multiplier, same
 * floor and cap — and never above `reserved`, what the claim admitted (seed 000: "после скачивания
 * уточняйте"). A refinement only lowers a reservation, so it always fits and the budget is never
 * overbooked (issue 11 item 5). It cannot need more either: the real size equals the declared one
 * (else `size_mismatch`) or, unsized, is at most the mode's limit (else `too_big`).
 * @param reserved bytes the job holds from its claim (`reserved_bytes`)
 */
export function refinedReservation(realSize: number, multiplier: number, budget: number, floor = 0, reserved = Number.POSITIVE_INFINITY): number {
  return Math.min(reserved, budget, Math.max(1, floor, Math.ceil(realSize * multiplier)));
}

/** Whether a reservation fits next to what is in use; an idle budget always admits one job. */
export function fits(inUse: number, reservation: number, budget: number): boolean {
  return inUse === 0 || inUse + reservation <= budget;
}

/**
 * The multiplier that counts what docket itself writes (issue 16: "the byte budget counts what docket writes").
 * BUDGET_MULTIPLIER covers the source plus work and results; in local mode the source is the Bot API server's
 * file, read in place and never docket's to write or delete, so one × the size comes off (never below 0).
 */
export function writtenMultiplier(multiplier: number, mode: "cloud" | "local"): number {
  return mode === "local" ? Math.max(0, multiplier - 1) : multiplier;
}
