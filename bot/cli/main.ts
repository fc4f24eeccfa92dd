/**
 * The `docket` operator command (installed as /usr/local/bin/docket): `docket <command> …`.
 * Each command lives in its own module and keeps the exit statuses of ./command.ts (0 done,
 * 1 failed with one sentence, 2 bad usage with the usage line, never a stack trace).
 * Without a command, or with an unknown one: every usage line, exit 2. `docket --help`: exit 0.
 */
import type { Command } from "./command.ts";
import { backupCommand } from "./backup-command.ts";
import { backupStatusCommand } from "./backup-status-command.ts";
import { jobCommand } from "./job-command.ts";
import { modeCommand } from "./mode-command.ts";
import { rollbackCommand } from "./rollback-command.ts";
import { notifyCommand } from "./notify-command.ts";
import { statusCommand } from "./status-command.ts";
import { storeCommand } from "./store-command.ts";

/** Commands by name. */
const COMMANDS: Record<string, Command> = {
  mode: modeCommand,
  rollback: rollbackCommand,
  backup: backupCommand,
  "backup-status": backupStatusCommand,
  notify: notifyCommand,
  status: statusCommand,
  job: jobCommand,
  store: storeCommand,
};

const usage = () => Object.values(COMMANDS).map((c) => `usage: ${c.usage}`).join("\n");

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === "--help" || name === "-h" || name === "help") {
    console.log(usage());
    return 0;
  }
  const command = name === undefined ? undefined : COMMANDS[name];
  if (!command) {
    console.error(`${name === undefined ? "" : `docket: unknown command ${JSON.stringify(name)}\n`}${usage()}`);
    return 2;
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    console.log(`usage: ${command.usage}`);
    return 0;
  }
  return command.run(rest);
}

process.exit(await main(process.argv.slice(2)));
