/**
 * Token-free check that a Bot API server answers at `root`, before `docket mode` changes
 * anything (audit of issue 6, gap 6). It never sends the token and never calls a method, so it
 * cannot log the bot in to a server or out of one.
 *
 * Rule (botapi-facts.md §1 and the error table): telegram-bot-api answers every path that does
 * not start with `/bot` with HTTP 404 and `{"ok":false,"error_code":404,"description":"Not Found"}`.
 */

/** Options of {@link probeBotApiServer}. */
export interface ProbeOptions {
  /**
   * true: the answer must be that 404 envelope (a local telegram-bot-api server). false: any
   * HTTP answer will do (api.telegram.org answers `/` with a redirect to its documentation).
   */
  readonly strict: boolean;
  /** Time limit of the request, ms (default 5000). */
  readonly timeoutMs?: number;
}

/**
 * `GET <root>/` without redirects. Resolves when the server answered as expected.
 * @param root Bot API root such as `http://127.0.0.1:8081` (no trailing slash; holds no token)
 * @throws Error saying what answered instead (network error, timeout, other status or body)
 */
export async function probeBotApiServer(root: string, opts: ProbeOptions): Promise<void> {
  let res: Response;
  try {
    res = await fetch(`${root}/`, { redirect: "manual", signal: AbortSignal.timeout(opts.timeoutMs ?? 5000) });
  } catch (err) {
    const e = err as Error & { code?: string };
    throw new Error(`no answer from ${root}/ (${e.name === "TimeoutError" ? "timed out" : (e.code ?? e.message)})`);
  }
  const body = await res.text();
  if (!opts.strict) return;
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    json = undefined;
  }
  const env = json as { ok?: unknown; error_code?: unknown } | undefined;
  if (res.status === 404 && env?.ok === false && env.error_code === 404) return;
  throw new Error(`${root}/ answered HTTP ${res.status} ${JSON.stringify(body.slice(0, 80))}, not a Bot API server's 404 {"ok":false,"error_code":404,…}`);
}
