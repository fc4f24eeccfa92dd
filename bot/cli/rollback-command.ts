/**
 * `docket rollback`: undo the last upgrade in one command — back to the release the running one
 * was installed over, with that release's pre-upgrade backup when the database must go back too.
 * The work is scripts/rollback.sh of this release (systemctl, restore.sh and the `current` link
 * are shell's job); this command runs it with the same arguments and its exit status (0 done,
 * 1 refused or failed with one line, 4 rolled back but /healthz did not answer).
 */
import { join } from "node:path";
import type { Command } from "./command.ts";

/** scripts/rollback.sh of the release this file belongs to. */
const SCRIPT = join(import.meta.dirname, "../../scripts/rollback.sh");

/** `docket rollback …` */
export const rollbackCommand: Command = {
  usage: "docket rollback [--to RELEASE] [--restore | --keep-db] [--dry-run]",
  async run(argv) {
    const child = Bun.spawn(["bash", SCRIPT, ...argv], { stdio: ["inherit", "inherit", "inherit"] });
    return await child.exited;
  },
};
