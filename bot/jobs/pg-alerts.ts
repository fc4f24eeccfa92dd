/**
 * The `ops_alerts` half of the PostgreSQL JobStore (issue 10 item 3; CONTRACTS.md §2 and §5), the same
 * conditional writes as ./sqlite-alerts.ts: a claim only while the alert is `pending` or its `sending`
 * claim is older than ALERT_CLAIM_TTL_MS (its sender died), a settle only from `sending`, so two senders
 * on any hosts never deliver the same alert.
 */
import { and, asc, eq, gte, lt, or } from "drizzle-orm";
import type { PostgresJsDatabase } from "drizzle-orm/postgres-js";
import * as pg from "../db/pg-schema.ts";
import type { OpsAlert } from "../db/schema.ts";
import { iso } from "./lease.ts";
import { ALERT_CLAIM_TTL_MS } from "./sqlite-alerts.ts";
import type { AlertState, NewAlert } from "./store.ts";

const { opsAlerts } = pg;

/** Alert reads and writes on one drizzle PostgreSQL handle. */
export class PgAlerts {
  constructor(private readonly db: PostgresJsDatabase<typeof pg>) {}

  /** Rows a sender may claim at `now`: pending, or claimed long ago. */
  private claimable(now: number) {
    return or(eq(opsAlerts.state, "pending"), and(eq(opsAlerts.state, "sending"), lt(opsAlerts.claimedAt, iso(now - ALERT_CLAIM_TTL_MS))));
  }

  async record(a: NewAlert, now: number): Promise<number> {
    const [r] = await this.db.insert(opsAlerts).values({ cause: a.cause, text: a.text, source: a.source, state: "pending", createdAt: iso(now) }).returning({ id: opsAlerts.id });
    return r!.id;
  }

  async pending(now: number): Promise<OpsAlert[]> {
    return this.db.select().from(opsAlerts).where(this.claimable(now)).orderBy(asc(opsAlerts.id));
  }

  async claim(id: number, now: number): Promise<boolean> {
    return (await this.db.update(opsAlerts).set({ state: "sending", claimedAt: iso(now) }).where(and(eq(opsAlerts.id, id), this.claimable(now))).returning({ id: opsAlerts.id })).length > 0;
  }

  async settle(id: number, state: Exclude<AlertState, "pending" | "sending">, detail: string | null, now: number): Promise<boolean> {
    return (await this.db.update(opsAlerts).set({ state, detail, settledAt: iso(now) }).where(and(eq(opsAlerts.id, id), eq(opsAlerts.state, "sending"))).returning({ id: opsAlerts.id })).length > 0;
  }

  async since(sinceMs: number): Promise<OpsAlert[]> {
    return this.db.select().from(opsAlerts).where(gte(opsAlerts.createdAt, iso(sinceMs))).orderBy(asc(opsAlerts.id));
  }
}
