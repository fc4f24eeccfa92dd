/**
 * Session advisory locks held on a connection of their own (issue 14 item 3): who receives updates
 * across all hosts. `pg_try_advisory_lock` on a reserved connection of the locks' own pool (./pg-open.ts
 * `OpenPg.locks`, so a held lock never takes a connection transactions wait for); the server releases
 * the lock the moment that connection closes — a process SIGKILLed, its host gone, its network cut —
 * so another process's next try (every `retryMs`) takes it over within seconds. The holder checks
 * every `checkMs` on the same connection that it still holds the lock (`pg_locks` of its backend);
 * a failed check (connection lost, server restarted) means the lock may already be someone else's:
 * the holder is told at once ({@link LockHolder.lost}) and must stop acting as the only one.
 */
import type { ReservedSql } from "postgres";
import type { PgSql } from "./pg-open.ts";
import { LOCK_CLASS } from "./pg-locks.ts";

/** Timings of a {@link SessionLock} (ms). */
export interface SessionLockTimings {
  /** How often a waiting process tries to take the lock (default 1000). */
  readonly retryMs?: number;
  /** How often the holder checks it still holds it (default 1000). */
  readonly checkMs?: number;
}

/** A lock this process holds. */
export interface LockHolder {
  /** Resolves with why once the lock is (or may be) lost; never rejects. */
  readonly lost: Promise<string>;
  /** Give the lock back and release the connection (idempotent). */
  release(): Promise<void>;
}

/** Sleep `ms` unless `signal` aborts first (resolves either way). */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/** One named session lock `(LOCK_CLASS, object)` of the pool `sql`. */
export class SessionLock {
  private readonly retryMs: number;
  private readonly checkMs: number;

  constructor(
    private readonly sql: PgSql,
    /** The lock's object key (bot/db/pg-locks.ts LOCKS). */
    readonly object: number,
    timings: SessionLockTimings = {},
  ) {
    this.retryMs = timings.retryMs ?? 1000;
    this.checkMs = timings.checkMs ?? 1000;
  }

  /**
   * Try once: the holder, or null when another session holds it.
   * @throws the client's error when the server cannot be reached
   */
  async tryTake(): Promise<LockHolder | null> {
    const conn = await this.sql.reserve();
    try {
      const [r] = await conn<{ ok: boolean }[]>`SELECT pg_try_advisory_lock(${LOCK_CLASS}, ${this.object}) AS ok`;
      if (!r?.ok) {
        conn.release();
        return null;
      }
    } catch (err) {
      conn.release();
      throw err;
    }
    return this.holder(conn);
  }

  /**
   * Wait until this process holds the lock (tries every `retryMs`; a database error is reported to
   * `onError` and tried again), or null when `signal` aborts first.
   */
  async take(signal: AbortSignal, onError: (err: unknown) => void = () => {}): Promise<LockHolder | null> {
    while (!signal.aborted) {
      try {
        const h = await this.tryTake();
        if (h) {
          if (!signal.aborted) return h;
          await h.release();
          return null;
        }
      } catch (err) {
        onError(err);
      }
      await pause(this.retryMs, signal);
    }
    return null;
  }

  /** Watch a held lock on its connection until it is lost or released. */
  private holder(conn: ReservedSql<{ int8: number }>): LockHolder {
    let released = false;
    let reportLost!: (why: string) => void;
    const lost = new Promise<string>((resolve) => (reportLost = resolve));
    const stop = new AbortController();
    const watch = async () => {
      while (!released) {
        await pause(this.checkMs, stop.signal);
        if (released) return;
        try {
          const [r] = await conn<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND classid = ${LOCK_CLASS}::int::oid AND objid = ${this.object}::int::oid AND objsubid = 2 AND granted`;
          if ((r?.n ?? 0) === 0) return reportLost("the lock is no longer held by this session");
        } catch (err) {
          return reportLost(`the lock's connection failed: ${(err as Error).message}`);
        }
      }
    };
    void watch();
    return {
      lost,
      release: async () => {
        if (released) return;
        released = true;
        stop.abort();
        try {
          await conn`SELECT pg_advisory_unlock(${LOCK_CLASS}, ${this.object})`;
        } catch {
          // The connection is gone: so is the lock.
        }
        conn.release();
      },
    };
  }
}

/**
 * Run `fn` only if no other session runs it now: a session lock taken for the call and given back
 * after (the janitor's global expiry pass; issue 14 item 3). Resolves `{ ran: false }` when another
 * process holds the lock.
 * @throws what `fn` throws (the lock is given back first), or the client's error
 */
export async function onceAcrossHosts<T>(sql: PgSql, object: number, fn: () => Promise<T>): Promise<{ ran: true; value: T } | { ran: false }> {
  const holder = await new SessionLock(sql, object, { checkMs: 60_000 }).tryTake();
  if (!holder) return { ran: false };
  try {
    return { ran: true, value: await fn() };
  } finally {
    await holder.release();
  }
}
