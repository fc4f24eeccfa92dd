/**
 * The final-status statements (./final-sql.ts) for `SqliteJobStore`, prepared once per connection.
 * Rows come back shaped like drizzle's `FileJob`.
 */
import type { Database, Statement } from "bun:sqlite";
import type { FileJob } from "../db/schema.ts";
import { finalSql, hostPrefix } from "./final-sql.ts";
import { iso } from "./lease.ts";
import { ROW } from "./sqlite-statements.ts";

type Params = Record<string, string | number | null>;

/** Prepared final-status statements over one bun:sqlite connection (synchronous). */
export class FinalStatements {
  private readonly pendingStmt: Statement<FileJob, [Params]>;
  private readonly claimStmt: Statement<FileJob, [Params]>;
  private readonly renewStmt: Statement<unknown, [Params]>;
  private readonly finishStmt: Statement<unknown, [Params]>;
  private readonly retryStmt: Statement<unknown, [Params]>;
  private readonly reclaimStmt: Statement<unknown, [Params]>;

  /** @param sqlite the store's connection */
  constructor(sqlite: Database) {
    const q = finalSql(ROW);
    this.pendingStmt = sqlite.prepare(q.pending);
    this.claimStmt = sqlite.prepare(q.claim);
    this.renewStmt = sqlite.prepare(q.renew);
    this.finishStmt = sqlite.prepare(q.finish);
    this.retryStmt = sqlite.prepare(q.retryLater);
    this.reclaimStmt = sqlite.prepare(q.reclaimHost);
  }

  /** See JobStore.pendingFinals. */
  pending(now: number, limit: number): FileJob[] {
    return this.pendingStmt.all({ now: iso(now), limit });
  }

  /** See JobStore.claimFinal. */
  claim(id: number, owner: string, now: number, until: number): FileJob | null {
    return this.claimStmt.get({ id, owner, now: iso(now), until: iso(until) }) ?? null;
  }

  /** See JobStore.renewFinals. */
  renew(owner: string, until: number): number {
    return this.renewStmt.run({ owner, until: iso(until) }).changes;
  }

  /** See JobStore.finishFinal. */
  finish(id: number, now: number): boolean {
    return this.finishStmt.run({ id, now: iso(now) }).changes > 0;
  }

  /** See JobStore.retryFinalLater. */
  retryLater(id: number, owner: string, notBefore: number): boolean {
    return this.retryStmt.run({ id, owner, notBefore: iso(notBefore) }).changes > 0;
  }

  /** See JobStore.reclaimHostFinals. */
  reclaimHost(hostId: string, self: string): number {
    return this.reclaimStmt.run(hostPrefix(hostId, self)).changes;
  }
}
