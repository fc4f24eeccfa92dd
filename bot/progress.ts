/**
 * Progress of a long operator operation: redrawn in place on a terminal, nothing at all when the
 * output is not a TTY (the journal, a pipe), where only the operation's own start and end lines
 * appear (issue 10: "progress on a TTY, quiet in the journal"). Used by the CLI's mode switch and the
 * restore check (bot/backup/verify.ts), so it lives below both.
 */

/** A progress line. */
export interface Progress {
  /** Replace the line's text (no-op off a TTY). */
  update(text: string): void;
  /** Clear the line (no-op off a TTY). */
  done(): void;
}

/** A progress line on `stream` (default stderr). */
export function progressLine(stream: NodeJS.WriteStream = process.stderr): Progress {
  const tty = stream.isTTY === true;
  return {
    update: (text) => {
      if (tty) stream.write(`\r\x1b[K${text}`);
    },
    done: () => {
      if (tty) stream.write("\r\x1b[K");
    },
  };
}
