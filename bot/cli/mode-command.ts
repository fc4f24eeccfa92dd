/**
 * `docket mode cloud|local`: the command line of bot/cli/mode.ts. Exit 0 on success, 1 when a step
 * failed (the sentence says what state things are in; an env file that cannot be read says to run
 * as root), 2 on bad usage.
 */
import { redactSecrets } from "../log.ts";
import { parseOptions, usageError, type Command } from "./command.ts";
import { ModeSwitchError, switchMode } from "./mode.ts";

/** `docket mode …` */
export const modeCommand: Command = {
  usage: "docket mode cloud|local [--api-root URL] [--env /etc/docket/docket.env] [--dry-run] [--no-restart]",
  async run(argv) {
    const parsed = parseOptions(argv, {
      "api-root": { type: "string" },
      env: { type: "string", default: process.env.DOCKET_ENV_FILE ?? "/etc/docket/docket.env" },
      "dry-run": { type: "boolean", default: false },
      "no-restart": { type: "boolean", default: false },
    });
    if (typeof parsed === "string") return usageError(this, parsed);
    const { values, positionals } = parsed;
    const [target, ...rest] = positionals;
    if ((target !== "cloud" && target !== "local") || rest.length > 0) return usageError(this);
    try {
      await switchMode({
        target,
        envFile: values.env!,
        ...(values["api-root"] ? { apiRoot: values["api-root"] } : {}),
        dryRun: values["dry-run"],
        noRestart: values["no-restart"],
        ...(process.env.SYSTEMCTL ? { systemctl: process.env.SYSTEMCTL.split(" ") } : {}),
      });
      return 0;
    } catch (err) {
      // ModeSwitchError messages are written for the operator and already redacted.
      if (err instanceof ModeSwitchError) console.error(`docket mode: ${err.message}`);
      else console.error(`docket mode: unexpected error: ${redactSecrets(err instanceof Error ? err.message : String(err))}`);
      return 1;
    }
  },
};
