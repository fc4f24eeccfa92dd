/**
 * The `docket` operator command: `docket mode cloud|local [--api-root URL]
 * [--env FILE] [--dry-run] [--no-restart]`. Exit 0 on success, 1 when a step
 * failed (with the sentence saying what state things are in; an env file that
 * cannot be read says to run as root), 2 on bad usage (unknown option, missing
 * value, wrong command: the usage line, never a stack trace).
 */
import { parseArgs } from "node:util";
import { redactSecrets } from "../log.ts";
import { ModeSwitchError, switchMode } from "./mode.ts";

const USAGE = "usage: docket mode cloud|local [--api-root URL] [--env /etc/docket/docket.env] [--dry-run] [--no-restart]";

/** Parsed command line, or the usage error message. */
function parse(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        "api-root": { type: "string" },
        env: { type: "string", default: process.env.DOCKET_ENV_FILE ?? "/etc/docket/docket.env" },
        "dry-run": { type: "boolean", default: false },
        "no-restart": { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
      },
    });
  } catch (err) {
    // node:util parseArgs: TypeError with code ERR_PARSE_ARGS_* for unknown options and missing values.
    return (err as Error).message;
  }
}

async function main(argv: string[]): Promise<number> {
  const parsed = parse(argv);
  if (typeof parsed === "string") {
    console.error(`docket: ${parsed}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const [cmd, target, ...rest] = positionals;
  if (cmd !== "mode" || (target !== "cloud" && target !== "local") || rest.length > 0) {
    console.error(USAGE);
    return 2;
  }
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
}

process.exit(await main(process.argv.slice(2)));
