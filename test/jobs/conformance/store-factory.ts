/**
 * Store conformance suites (CONTRACTS.md §5; issue 14 item 2): each suite is a function of a
 * {@link StoreFactory}, and both stores run every suite — SQLite on a real file
 * (test/jobs/sqlite-conformance.test.ts) and PostgreSQL on a real server
 * (test/jobs/pg-conformance.test.ts). A factory makes a fresh, empty, migrated store per test and
 * tears it down after.
 */
import { afterEach, beforeEach } from "vitest";
import type { JobStore } from "../../../bot/jobs/store.ts";

/** A fresh store for one test and how to dispose of it. */
export interface MadeStore {
  readonly store: JobStore;
  close(): Promise<void> | void;
  /**
   * A second store on the same database through its own connection(s) — another process's view
   * (SQLite: a second handle on the file; PostgreSQL: a second pool). Closed with this one.
   */
  twin?(): Promise<JobStore>;
}

/** Makes one fresh, empty store (a new database) per call. */
export type StoreFactory = () => Promise<MadeStore> | MadeStore;

/** `beforeEach` makes a store with `make` and hands it to `set` (with the made store); `afterEach` closes it. */
export function useFactoryStore(make: StoreFactory, set: (store: JobStore, made: MadeStore) => void): void {
  let made: MadeStore | undefined;
  beforeEach(async () => {
    made = await make();
    set(made.store, made);
  });
  afterEach(async () => {
    await made?.close();
    made = undefined;
  });
}
