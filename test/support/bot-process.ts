/**
 * The real bot (`bun bot/main.ts`) as a child process whose journal lines the test reads: stdout (pino JSON
 * lines) is read as it comes, so the pipe never fills, and kept parsed. For SIGKILL tests (issue 11 items 3
 * and 4): kill it, read what it wrote, start the next one on the same data.
 */
import { REPO_ROOT } from "../../scripts/demo/bot-process.ts";

/** A running bot process and what it has written so far. */
export interface BotProcess {
  readonly proc: ReturnType<typeof Bun.spawn>;
  /** Every stdout line parsed as JSON (lines that are not JSON are kept as `{ raw }`). */
  readonly lines: Array<Record<string, unknown>>;
  /** The raw stdout text so far. */
  text(): string;
  /** SIGKILL and wait for the exit; resolves once stdout is read to its end. */
  kill(): Promise<void>;
  /** SIGTERM and wait; resolves with the exit code once stdout is read to its end. */
  stop(): Promise<number>;
  /** Wait for the process to end by itself; resolves with the exit code once stdout is read to its end. */
  exited(): Promise<number>;
}

/**
 * Spawn the bot with `env` (see `botEnv` in scripts/demo/bot-process.ts); stderr is dropped (a pipe
 * nobody reads could fill and block the bot), stdout is collected.
 */
export function startBotProcess(env: Record<string, string | undefined>): BotProcess {
  const proc = Bun.spawn(["bun", "--no-env-file", "bot/main.ts"], { cwd: REPO_ROOT, env, stdout: "pipe", stderr: "ignore" });
  const lines: Array<Record<string, unknown>> = [];
  let text = "";
  const read = (async () => {
    const decoder = new TextDecoder();
    let buf = "";
    for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) {
      const s = decoder.decode(chunk, { stream: true });
      text += s;
      buf += s;
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (!line.trim()) continue;
        try {
          lines.push(JSON.parse(line) as Record<string, unknown>);
        } catch {
          lines.push({ raw: line });
        }
      }
    }
  })();
  return {
    proc,
    lines,
    text: () => text,
    async kill() {
      proc.kill("SIGKILL");
      await proc.exited;
      await read;
    },
    async stop() {
      proc.kill("SIGTERM");
      const code = await proc.exited;
      await read;
      return code;
    },
    async exited() {
      const code = await proc.exited;
      await read;
      return code;
    },
  };
}

