/**
 * The `ops_alerts` half of the SQLite JobStore (issue 10 item 3; CONTRACTS.md §2 and §5): operator
 * alerts recorded by the bot or by `docket notify`, claimed by one sender, settled once. Every write
 * is conditional on the state it leaves (`pending`, or a `sending` claim older than
 * {@link ALERT_CLAIM_TTL_MS} whose sender died), so two senders never deliver the same alert.
 */
import { and, asc, eq, gte, lt, or } from "drizzle-orm";
import type { DocketDb } from "../db/open.ts";
import { opsAlerts, type OpsAlert } from "../db/schema.ts";
import { iso } from "./lease.ts";
import type { AlertState, NewAlert } from "./store.ts";

/** A `sending` claim older than this is taken as abandoned (its sender died), ms. */
export const ALERT_CLAIM_TTL_MS = 10 * 60_000;

/** Alert reads and writes on one drizzle handle. */
export class SqliteAlerts {
  constructor(private readonly db: DocketDb) {}

  /** Rows a sender may claim at `now`: pending, or claimed long ago. */
  private claimable(now: number) {
    return or(eq(opsAlerts.state, "pending"), and(eq(opsAlerts.state, "sending"), lt(opsAlerts.claimedAt, iso(now - ALERT_CLAIM_TTL_MS))));
  }

  record(a: NewAlert, now: number): number {
    return this.db.insert(opsAlerts).values({ cause: a.cause, text: a.text, source: a.source, state: "pending", createdAt: iso(now) }).returning({ id: opsAlerts.id }).get()!.id;
  }

  pending(now: number): OpsAlert[] {
    return this.db.select().from(opsAlerts).where(this.claimable(now)).orderBy(asc(opsAlerts.id)).all();
  }

  claim(id: number, now: number): boolean {
    return this.db.update(opsAlerts).set({ state: "sending", claimedAt: iso(now) }).where(and(eq(opsAlerts.id, id), this.claimable(now))).returning({ id: opsAlerts.id }).all().length > 0;
  }

  settle(id: number, state: Exclude<AlertState, "pending" | "sending">, detail: string | null, now: number): boolean {
    return this.db.update(opsAlerts).set({ state, detail, settledAt: iso(now) }).where(and(eq(opsAlerts.id, id), eq(opsAlerts.state, "sending"))).returning({ id: opsAlerts.id }).all().length > 0;
  }

  since(sinceMs: number): OpsAlert[] {
    return this.db.select().from(opsAlerts).where(gte(opsAlerts.createdAt, iso(sinceMs))).orderBy(asc(opsAlerts.id)).all();
  }
}
