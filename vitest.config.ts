import { defineConfig } from "vitest/config";

/** Vitest under Bun (`bun --bun vitest run`): real SQLite, real files, the emulator on 127.0.0.1. */
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "bot/**/*.test.ts", "processors/**/*.test.ts"],
    // A checkout root an unprivileged user can read, for the suites that run as one (a private
    // clone dir is bind-mounted): test/support/unprivileged.ts.
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // expect.poll waits for effects that follow a commit (files removed, counters, messages). Its 1 s
    // default is too short on a loaded 2-core CI runner; a passing poll returns as soon as it holds.
    expect: { poll: { timeout: 15_000 } },
    pool: "forks",
    fileParallelism: true,
    maxWorkers: 2,
  },
});
