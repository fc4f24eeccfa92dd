/** Shared helper of the fetcher tests. */
import { FetchError } from "../../bot/fetch/errors.ts";
import type { TryFailure } from "../../bot/jobs/retry.ts";

/**
 * The classified failure a fetch promise rejects with.
 * @throws the rejection itself when it is not a FetchError, or an Error when the promise resolves
 */
export async function failureOf(p: Promise<unknown>): Promise<TryFailure> {
  try {
    await p;
  } catch (err) {
    if (err instanceof FetchError) return err.failure;
    throw err;
  }
  throw new Error("expected a FetchError");
}
