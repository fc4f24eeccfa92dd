/**
 * Albums whose first part was refused by a per-user limit (issue 13 item 5). Telegram delivers an album's
 * parts as separate updates, so without this every part would be refused again with a reply of its own —
 * ten identical refusals for an album of ten photos. The chat gets one refusal per album: the later parts
 * of a refused album are dropped silently. Kept in memory by the one process that receives updates (a
 * restart forgets, which costs at most one more refusal); an entry lives `keepMs` from the refusal.
 */
export class RefusedAlbums {
  /** Key → epoch ms of the refusal. */
  private readonly at = new Map<string, number>();

  /** @param keepMs how long a refusal covers the album's later parts, ms */
  constructor(private readonly keepMs: number) {}

  /** Remember that the album `key` (`<chat id>:<album key>`) was refused at `now` (epoch ms); older entries are dropped. */
  remember(key: string, now: number): void {
    for (const [k, t] of this.at) if (now - t >= this.keepMs) this.at.delete(k);
    this.at.set(key, now);
  }

  /** Whether the album `key` was refused less than `keepMs` before `now` (epoch ms). */
  has(key: string, now: number): boolean {
    const t = this.at.get(key);
    return t !== undefined && now - t < this.keepMs;
  }
}
