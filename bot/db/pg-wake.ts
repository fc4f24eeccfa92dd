/**
 * Wake-ups across processes and hosts (issue 14 item 1): `LISTEN docket_wake` on a connection of its
 * own (postgres.js re-listens by itself after a reconnect), `NOTIFY docket_wake` when work became
 * claimable somewhere (a job accepted, a download handed over to processing, a job released). The
 * engine's idle poll stays as the slow fallback for a missed notification and for retry backoffs and
 * lease expiries, which no one announces.
 */
import type { PgSql } from "./pg-open.ts";

/** The channel of docket's wake-ups. */
export const WAKE_CHANNEL = "docket_wake";

/** Announce and hear "there is work" across processes. */
export interface WakeChannel {
  /** Tell every process (this one included) to look for work now; never throws (a failure is `onError`'s). */
  announce(): void;
  /** Call `onWake` on every announcement; resolves once listening, with the function that stops it. */
  subscribe(onWake: () => void): Promise<() => Promise<void>>;
}

/**
 * A {@link WakeChannel} over PostgreSQL. Announcements close together are sent once per `coalesceMs`
 * (default 0: one NOTIFY per call, deferred to the next tick so a burst of calls sends one).
 */
export function pgWakeChannel(sql: PgSql, onError: (err: unknown) => void, coalesceMs = 0): WakeChannel {
  let pending = false;
  return {
    announce() {
      if (pending) return;
      pending = true;
      setTimeout(() => {
        pending = false;
        sql.notify(WAKE_CHANNEL, "").catch(onError);
      }, coalesceMs);
    },
    async subscribe(onWake) {
      const r = await sql.listen(WAKE_CHANNEL, () => onWake());
      return () => r.unlisten();
    },
  };
}
