/**
 * `docket mode cloud|local`: the command line of bot/cli/mode.ts. Exit 0 on success; 1 when a step
 * failed (the sentence names the step, what was rolled back and the way out; an env file that
 * cannot be read says to run as root); 2 on bad usage; 75 (EX_TEMPFAIL) when Telegram refuses the
 * switch for now (a 10-minute window) and nothing is changed: run it again later, or with --wait.
 */
import { redactSecrets } from "../log.ts";
import { parseOptions, usageError, type Command } from "./command.ts";
import { ModeSwitchError, ModeWindowError, switchMode } from "./mode.ts";

/** Exit status when Telegram refuses the switch for now (sysexits EX_TEMPFAIL). */
export const EXIT_WINDOW = 75;

/** `docket mode …` */
export const modeCommand: Command = {
  usage: "docket mode cloud|local [--api-root URL] [--env /etc/docket/docket.env] [--wait] [--force] [--dry-run] [--no-restart]",
  async run(argv) {
    const parsed = parseOptions(argv, {
      "api-root": { type: "string" },
      env: { type: "string", default: process.env.DOCKET_ENV_FILE ?? "/etc/docket/docket.env" },
      "dry-run": { type: "boolean", default: false },
      "no-restart": { type: "boolean", default: false },
      wait: { type: "boolean", default: false },
      force: { type: "boolean", default: false },
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
        wait: values.wait,
        force: values.force,
        ...(process.env.SYSTEMCTL ? { systemctl: process.env.SYSTEMCTL.split(" ") } : {}),
      });
      return 0;
    } catch (err) {
      // ModeSwitchError messages are written for the operator and already redacted.
      if (err instanceof ModeWindowError) {
        console.error(`docket mode: ${err.message}`);
        return EXIT_WINDOW;
      }
      if (err instanceof ModeSwitchError) console.error(`docket mode: ${err.message}`);
      else console.error(`docket mode: unexpected error: ${redactSecrets(err instanceof Error ? err.message : String(err))}`);
      return 1;
    }
  },
};
