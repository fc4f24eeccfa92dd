/**
 * The outbox's rate state shared by every process of one bot through PostgreSQL (issue 14 item 5;
 * the design in ./ledger.ts): each chat's timings — the last call of each kind and the 429 hold — in a
 * row of `outbox_chat_rates`, merged with GREATEST both ways, and the bot-wide slot queue (~30/s,
 * botapi-facts §3) in one row of `outbox_bot_rates`, reserved in one UPDATE … RETURNING. A chat's
 * machine plans on its local Timings after {@link PgLedger.refresh} brought in what other processes
 * did, so a hold one process met (its 429) stops every process's calls to that chat, and one chat's
 * pace counts the sends of every process.
 *
 * Times are epoch ms (the Outbox runs with {@link epochClock}); hosts keep their clocks in sync
 * (NTP), as the leases already require. A database error never stops a send: the ledger then acts
 * on what this process knows (a warning is logged once per minute at most).
 */
import type { PgSql } from "../db/pg-open.ts";
import { realClock, type Clock } from "./clock.ts";
import type { RateLedger } from "./ledger.ts";
import { RateLimiter, type BotLimiter } from "./limiter.ts";
import { TimingsCache, type Timings } from "./timings.ts";

/** The outbox clock for a shared ledger: epoch ms (comparable across hosts), real timers. */
export const epochClock: Clock = { now: () => Date.now(), sleep: realClock.sleep };

/** Timing fields kept as columns (epoch ms, NULL = never). */
const FIELDS = ["send", "edit", "delete", "action", "draft", "message", "holdUntil"] as const;
/** Column name of each field. */
const COLUMN: Record<(typeof FIELDS)[number], string> = { send: "send", edit: "edit", delete: "delete", action: "action", draft: "draft", message: "message", holdUntil: "hold_until" };

/** A stored time: -Infinity (never) is NULL. */
const stored = (v: number): number | null => (Number.isFinite(v) ? v : null);

/** A row as read back. */
type RateRow = Partial<Record<(typeof FIELDS)[number], number | null>> & { messageWeight: number };

/** Upsert one chat's timings, each column the later of both; the row after the merge. */
const UPSERT = `INSERT INTO outbox_chat_rates (key, ${FIELDS.map((f) => `"${COLUMN[f]}"`).join(", ")}, message_weight, updated_at)
  VALUES ($1, ${FIELDS.map((_, i) => `$${i + 2}::float8`).join(", ")}, $${FIELDS.length + 2}, to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
  ON CONFLICT (key) DO UPDATE SET
    ${FIELDS.map((f) => `"${COLUMN[f]}" = GREATEST(outbox_chat_rates."${COLUMN[f]}", EXCLUDED."${COLUMN[f]}")`).join(",\n    ")},
    message_weight = CASE WHEN EXCLUDED.message IS NOT NULL AND (outbox_chat_rates.message IS NULL OR EXCLUDED.message >= outbox_chat_rates.message) THEN EXCLUDED.message_weight ELSE outbox_chat_rates.message_weight END,
    updated_at = EXCLUDED.updated_at
  RETURNING ${FIELDS.map((f) => `"${COLUMN[f]}" AS "${f}"`).join(", ")}, message_weight AS "messageWeight"`;

/** Bring `t` up to `row` (later times win; the weight goes with the later message). */
function merge(t: Timings, row: RateRow): void {
  const message = row.message ?? -Infinity;
  if (message > t.message) t.messageWeight = row.messageWeight;
  for (const f of FIELDS) {
    const v = row[f];
    if (typeof v === "number" && v > t[f]) t[f] = v;
  }
}

/** Reserves bot-wide slots in `outbox_bot_rates`; real-send spacing stays in-process (./limiter.ts). */
class PgBotLimiter implements BotLimiter {
  private readonly local: RateLimiter;

  constructor(
    private readonly sql: PgSql,
    private readonly botId: string,
    perSecond: number,
    private readonly onError: (err: unknown) => void,
  ) {
    this.local = new RateLimiter(perSecond);
  }

  async reserve(now: number, weight: number): Promise<number> {
    const span = this.local.spacingMs * weight;
    try {
      const [r] = await this.sql<{ slot: number }[]>`
        INSERT INTO outbox_bot_rates (bot_id, next_slot) VALUES (${this.botId}, ${now + span})
        ON CONFLICT (bot_id) DO UPDATE SET next_slot = GREATEST(outbox_bot_rates.next_slot, ${now}::float8) + ${span}::float8
        RETURNING next_slot - ${span}::float8 AS slot`;
      // Also spend the slots locally: should the database fail later, this process keeps its own pace.
      this.local.reserve(now, weight);
      return Math.max(now, r?.slot ?? now);
    } catch (err) {
      this.onError(err);
      return this.local.reserve(now, weight);
    }
  }

  useWait(now: number): number {
    return this.local.useWait(now);
  }

  use(now: number, weight: number): void {
    this.local.use(now, weight);
  }
}

/** A {@link RateLedger} over PostgreSQL, shared by every process of the bot. */
export class PgLedger implements RateLedger {
  private readonly cache: TimingsCache;
  private readonly limiters = new Map<string, BotLimiter>();
  private lastWarnAt = -Infinity;

  /**
   * @param sql the store's pool
   * @param capacity chats whose timings this process keeps in memory (seed: timings_capacity)
   * @param perSecond bot-wide calls per second; 0 = no bot-wide cap
   * @param warn where a database failure is reported (at most once a minute)
   */
  constructor(
    private readonly sql: PgSql,
    capacity: number,
    private readonly perSecond: number,
    private readonly warn: (err: unknown) => void = () => {},
  ) {
    this.cache = new TimingsCache(capacity);
  }

  private failed(err: unknown): void {
    const now = Date.now();
    if (now - this.lastWarnAt < 60_000) return;
    this.lastWarnAt = now;
    this.warn(err);
  }

  timings(key: string): Timings {
    return this.cache.get(key);
  }

  async refresh(key: string, t: Timings): Promise<void> {
    try {
      const [row] = await this.sql.unsafe<RateRow[]>(`SELECT ${FIELDS.map((f) => `"${COLUMN[f]}" AS "${f}"`).join(", ")}, message_weight AS "messageWeight" FROM outbox_chat_rates WHERE key = $1`, [key], { prepare: true });
      if (row) merge(t, row);
    } catch (err) {
      this.failed(err);
    }
  }

  async record(key: string, t: Timings): Promise<void> {
    this.cache.touch(key, t);
    try {
      const [row] = await this.sql.unsafe<RateRow[]>(UPSERT, [key, ...FIELDS.map((f) => stored(t[f])), t.messageWeight] as never[], { prepare: true });
      if (row) merge(t, row);
    } catch (err) {
      this.failed(err);
    }
  }

  limiter(botId: string): BotLimiter | null {
    if (!(this.perSecond > 0)) return null;
    let l = this.limiters.get(botId);
    if (!l) this.limiters.set(botId, (l = new PgBotLimiter(this.sql, botId, this.perSecond, (err) => this.failed(err))));
    return l;
  }
}
