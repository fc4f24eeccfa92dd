/**
 * Start bench/outbox/emulator-child.ts (the project's Bot API emulator with Telegram's limits) in
 * its own process and talk to it over Bun IPC, so a benchmark's CPU figures are the client's alone.
 */

/** One IPC answer (fields depend on the command; see emulator-child.ts). */
export type Reply = Record<string, unknown> & { id: number };

/** A running emulator child: `rpc(cmd)` sends one command and resolves with its answer. */
export interface EmulatorChild {
  rpc(msg: Record<string, unknown>): Promise<Reply>;
  stop(): Promise<unknown>;
}

/** Spawn the child and wait until it is ready. */
export async function emulatorChild(): Promise<EmulatorChild> {
  const waiters = new Map<number, (r: Reply) => void>();
  let ready!: () => void;
  const readyP = new Promise<void>((r) => (ready = r));
  const child = Bun.spawn(["bun", new URL("./emulator-child.ts", import.meta.url).pathname], {
    stdout: "inherit",
    stderr: "inherit",
    ipc(message) {
      const m = message as Reply;
      if (m.id === 0) return ready();
      waiters.get(m.id)?.(m);
      waiters.delete(m.id);
    },
  });
  await readyP;
  let next = 1;
  return {
    rpc: (msg) =>
      new Promise<Reply>((resolve) => {
        const id = next++;
        waiters.set(id, resolve);
        child.send({ ...msg, id });
      }),
    stop: async () => (child.send({ id: -1, cmd: "close" }), await child.exited),
  };
}
