/** Test helpers for the pure outbox core: a machine, streams, and a fake-clock driver. */
import type { Emulator, EmulatorOptions } from "../emulator/index.ts";
import { useEmulator as useFileEmulator } from "../emulator/use-emulator.ts";
import type { Action, Result } from "../../bot/outbox/action.ts";
import { toChunk, type ChunkInput } from "../../bot/outbox/chunk.ts";
import { ChatMachine } from "../../bot/outbox/machine.ts";
import { makeOptions, type Options } from "../../bot/outbox/options.ts";
import { StreamState, type StreamConfig } from "../../bot/outbox/stream-state.ts";
import { newTimings } from "../../bot/outbox/timings.ts";

/** A private-chat machine at t = 0 with deterministic jitter (random() = 0.5 → no jitter). */
export function machine(over: Partial<Options> = {}, chatId = 42, random = () => 0.5): ChatMachine {
  return new ChatMachine(chatId, newTimings(), makeOptions({ globalPerSecond: 0, ...over }), random, 0);
}

/** Add a stream with the given id. */
export function stream(m: ChatMachine, id: number, cfg: Partial<StreamConfig> = {}): StreamState {
  const s = new StreamState(id, { typing: false, drafts: false, ...cfg });
  m.addStream(s);
  return s;
}

/** Normalize inputs into chunks. */
export function chunks(...xs: (string | ChunkInput)[]) {
  return xs.map((x) => toChunk(x));
}

/** Plan at `now`; expect an action; start it and return it. */
export function take(m: ChatMachine, now: number): Action {
  const p = m.plan(now);
  if (p.type !== "act") throw new Error(`expected an action at ${now}, got sleep until ${p.until}`);
  m.start(p.action);
  return p.action;
}

/** One record of the fake-clock driver. */
export interface Step {
  at: number;
  action: Action;
}

/**
 * Drive a machine with a fake clock until nothing is left to do before `until` ms:
 * plan → respond → apply at the same instant; sleeps jump the clock. Returns the actions taken.
 */
export function drive(m: ChatMachine, respond: (a: Action, at: number) => Result, until = 600_000, from = 0): Step[] {
  let now = from;
  let nextId = 1000;
  const steps: Step[] = [];
  for (let guard = 0; guard < 100_000; guard++) {
    m.tick(now);
    const p = m.plan(now);
    if (p.type === "act") {
      m.start(p.action);
      steps.push({ at: now, action: p.action });
      const r = respond(p.action, now);
      m.apply(p.action, r.ok && p.action.type === "send" && r.messageId === undefined ? { ok: true, messageId: nextId++ } : r, now);
      continue;
    }
    if (p.until === Infinity || p.until > until || p.until <= now) return steps;
    now = p.until;
  }
  throw new Error("drive: runaway");
}

/** Always succeed. */
export const okAll = (): Result => ({ ok: true });

/** Start one emulator (default, enforced limits unless `opts` says otherwise) for the whole file; `set` receives it, closed after all tests. */
export function useEmulator(set: (em: Emulator) => void, opts: EmulatorOptions = {}): void {
  useFileEmulator((em) => set(em), opts);
}

/** Wait `ms` milliseconds. */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Most entries of `times` (ms, any order) that fall within one sliding window of `windowMs`. */
export function maxInWindow(times: readonly number[], windowMs: number): number {
  const at = [...times].sort((a, b) => a - b);
  let max = 0;
  for (let i = 0, j = 0; i < at.length; i++) {
    while (at[i]! - at[j]! >= windowMs) j++;
    max = Math.max(max, i - j + 1);
  }
  return max;
}
