/**
 * Store conformance suites (CONTRACTS.md §5): each suite is a function of a {@link StoreFactory}, so the
 * SQLite store runs them now and the PostgreSQL store runs the same suites later. A factory makes a
 * fresh, empty, migrated store per test and tears it down after.
 */
import { afterEach, beforeEach } from "vitest";
import type { JobStore } from "../../../bot/jobs/store.ts";

/** A fresh store for one test and how to dispose of it. */
export interface MadeStore {
  readonly store: JobStore;
  close(): Promise<void> | void;
}

/** Makes one fresh, empty store (a new database) per call. */
export type StoreFactory = () => Promise<MadeStore> | MadeStore;

/** `beforeEach` makes a store with `make` and hands it to `set`; `afterEach` closes it. */
export function useFactoryStore(make: StoreFactory, set: (store: JobStore) => void): void {
  let made: MadeStore | undefined;
  beforeEach(async () => {
    made = await make();
    set(made.store);
  });
  afterEach(async () => {
    await made?.close();
    made = undefined;
  });
}
