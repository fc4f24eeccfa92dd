/**
 * Lease owner ids (CONTRACTS.md §6): every process start writes `<host id>/<process start id>` into
 * `lease_owner`. The host part says where the holder runs: a process on the same host that started
 * later knows for certain that an earlier process of its host with a lease is dead (one bot process
 * per host; systemd stops the old one before it starts the new one), so it takes those leases back
 * at once instead of waiting `LEASE_TTL` (issue 11 item 4). Leases of other hosts expire normally.
 */
import { randomBytes } from "node:crypto";

/** The separator between the host id and the process start id (never part of a HOST_ID). */
export const OWNER_SEPARATOR = "/";

/**
 * A fresh process start id: start time (epoch ms, base 36), pid and 4 random bytes, e.g.
 * `m3k9x2a1-4242-9f1c03aa`. Unique per start even when a pid is reused.
 * @param now epoch ms of the start
 */
export function newStartId(now: number = Date.now(), pid: number = process.pid): string {
  return `${now.toString(36)}-${pid}-${randomBytes(4).toString("hex")}`;
}

/**
 * The lease owner id of one process start: `<hostId>/<startId>`.
 * @throws Error when `hostId` is empty or contains the separator (config validates HOST_ID)
 */
export function ownerId(hostId: string, startId: string): string {
  if (hostId === "" || hostId.includes(OWNER_SEPARATOR)) throw new Error(`ownerId: invalid host id ${JSON.stringify(hostId)}`);
  return `${hostId}${OWNER_SEPARATOR}${startId}`;
}

/**
 * The host id of an owner id, or null for an owner written before owner ids had a host part
 * (`w-<pid>-<hex>`, only ever written by single-host SQLite installs).
 */
export function hostOf(owner: string): string | null {
  const i = owner.indexOf(OWNER_SEPARATOR);
  return i < 0 ? null : owner.slice(0, i);
}

/**
 * Whether a lease held by `holder` may be taken back at once by the process `self` of host `hostId`:
 * the holder is an earlier process of the same host (or a pre-owner-id holder, which can only be this
 * host's), never `self` itself.
 */
export function isReclaimable(holder: string, self: string, hostId: string): boolean {
  if (holder === self) return false;
  const host = hostOf(holder);
  return host === null || host === hostId;
}
