/**
 * What a crash test of the real bot process (test/kill/) starts, and its teardown after each test: the
 * bot processes it started (SIGKILLed when still running), then its emulators (closed), then its temp
 * folders (deleted) — in that order, so no process outlives the emulator it polls or the data dir it writes.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { startEmulator, type Emulator, type EmulatorOptions } from "../emulator/index.ts";
import { startBotProcess, type BotProcess } from "./bot-process.ts";

/** The parts of one crash test; everything made through it is torn down after the test. */
export interface CrashRig {
  /** A new temp folder (`prefix` + random, under the system temp dir). */
  tempDir(prefix: string): string;
  /** Start an emulator (test/emulator/). */
  emulator(options: EmulatorOptions): Promise<Emulator>;
  /** Start `bun bot/main.ts` with exactly `env` (test/support/bot-process.ts). */
  start(env: Record<string, string | undefined>): BotProcess;
}

/** Register the `afterEach` teardown and return the {@link CrashRig} the file's tests start things through. */
export function useCrashRig(): CrashRig {
  const procs: BotProcess[] = [];
  const emulators: Emulator[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const p of procs.splice(0)) if (p.proc.exitCode === null) await p.kill();
    for (const em of emulators.splice(0)) await em.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return {
    tempDir(prefix) {
      const dir = mkdtempSync(join(tmpdir(), prefix));
      dirs.push(dir);
      return dir;
    },
    async emulator(options) {
      const em = await startEmulator(options);
      emulators.push(em);
      return em;
    },
    start(env) {
      const p = startBotProcess(env);
      procs.push(p);
      return p;
    },
  };
}
