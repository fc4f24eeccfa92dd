/**
 * What the running bot reports on `GET /status` (bot/ops/runtime.ts), the live half of
 * `docket status` (bot/cli/status-screen.ts renders it).
 */
import type { Check } from "./check.ts";

/** What the running bot reports on `/status` (bot/ops/runtime.ts). */
export interface BotReport {
  readonly phase: "starting" | "running" | "stopping";
  readonly pid: number;
  /** ISO time the process started. */
  readonly startedAt: string;
  readonly version: string;
  readonly commit: string;
  readonly host: string;
  readonly mode: "cloud" | "local";
  readonly intake: "polling" | "webhook";
  readonly store: string;
  readonly readiness: Readonly<Record<string, Check>>;
  readonly liveness: Readonly<Record<string, Check>>;
  /** ISO times, or null before the first. */
  readonly lastUpdateAt: string | null;
  readonly lastIntakeOkAt: string | null;
  readonly chatsOnHold: number;
  readonly outboxQueue: number;
  /** Journal lines at error and above of the last hour (the newest last), and their count. */
  readonly errors: { readonly count: number; readonly last: ReadonlyArray<{ readonly at: string; readonly level: string; readonly msg: string }> };
}
