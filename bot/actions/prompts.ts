/**
 * The questions action buttons ask (issue 15): how long one stays open, and the "merge with the next
 * files" prompt, whose action names the button press (`merge:<update_id>`) so each press starts a merge
 * job of its own (key `merge:<job id>:<update_id>`).
 */

/** How long a question ("which pages?", "send the files to merge") stays open, ms. */
export const PROMPT_MAX_AGE_MS = 10 * 60_000;

/** The prompt action of a "merge with the next files" press. */
export function mergePrompt(pressUpdateId: number): string {
  return `merge:${pressUpdateId}`;
}

/** The press update_id of a merge prompt's action, or null for another question. */
export function mergePress(action: string): number | null {
  const m = /^merge:(\d{1,15})$/.exec(action);
  return m ? Number(m[1]) : null;
}
