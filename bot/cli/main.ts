/**
 * The `docket` operator command: `docket mode cloud|local [--api-root URL]
 * [--env FILE] [--dry-run] [--no-restart]`. Exit 0 on success, 1 when a step
 * failed (with the sentence saying what state things are in), 2 on bad usage.
 */
import { parseArgs } from "node:util";
import { ModeSwitchError, switchMode } from "./mode.ts";

const USAGE = "usage: docket mode cloud|local [--api-root URL] [--env /etc/docket/docket.env] [--dry-run] [--no-restart]";

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      "api-root": { type: "string" },
      env: { type: "string", default: process.env.DOCKET_ENV_FILE ?? "/etc/docket/docket.env" },
      "dry-run": { type: "boolean", default: false },
      "no-restart": { type: "boolean", default: false },
    },
  });
  const [cmd, target] = positionals;
  if (cmd !== "mode" || (target !== "cloud" && target !== "local")) {
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
    if (err instanceof ModeSwitchError) {
      console.error(`docket mode: ${err.message}`);
      return 1;
    }
    throw err;
  }
}

process.exit(await main(process.argv.slice(2)));
