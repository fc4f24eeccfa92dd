/**
 * One sub-command of the `docket` operator command (bot/cli/main.ts dispatches on the first word).
 * Exit statuses every command keeps: 0 done, 1 failed (with one sentence saying why and what to
 * do), 2 bad usage (the usage line, never a stack trace). A command may add its own (documented).
 */
import { parseArgs, type ParseArgsConfig } from "node:util";

/** A `docket` sub-command. */
export interface Command {
  /** Usage line(s) without the "usage: " prefix, e.g. `docket mode cloud|local [--dry-run]`. */
  readonly usage: string;
  /** Run with the arguments after the command's name; resolves with the exit status. */
  run(argv: string[]): Promise<number>;
}

/** Exit status of bad usage. */
export const EXIT_USAGE = 2;

/**
 * `node:util` parseArgs over `argv` with positionals allowed; a usage error (unknown option, missing
 * value: TypeError ERR_PARSE_ARGS_*) is returned as its message instead of thrown.
 */
export function parseOptions<O extends NonNullable<ParseArgsConfig["options"]>>(argv: string[], options: O) {
  try {
    return parseArgs({ args: argv, allowPositionals: true, options });
  } catch (err) {
    return (err as Error).message;
  }
}

/** Print `docket: <problem>` and the command's usage on stderr; returns {@link EXIT_USAGE}. */
export function usageError(command: Command, problem?: string): number {
  console.error(`${problem ? `docket: ${problem}\n` : ""}usage: ${command.usage}`);
  return EXIT_USAGE;
}
