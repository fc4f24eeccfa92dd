/**
 * Named, cached health checks (issue 10 item 1): each check runs at most once per `ttlMs` however
 * often it is asked (probes and scrapes share one in-flight run), and never longer than its
 * deadline, so `/readyz` neither hammers Telegram nor hangs on it.
 */
import { redactSecrets } from "../log.ts";

/** One check's verdict, as the JSON bodies show it. */
export interface Check {
  readonly ok: boolean;
  /** One operator-readable line: what was measured, or what failed. */
  readonly detail: string;
}

/** How to run one check. */
export interface CheckSpec {
  /** Name in the JSON body and in `docket_ready_check{check}` (`database`, `botApi`, …). */
  readonly name: string;
  /** A result younger than this is reused, ms (0 = run on every ask; a function when it depends on the phase). */
  readonly ttlMs: number | (() => number);
  /** A run still going after this fails the check, ms. */
  readonly deadlineMs: number;
  /** The check; `signal` aborts at the deadline. A throw counts as failing with its message. */
  run(signal: AbortSignal): Promise<Check> | Check;
}

/** A check with its cache: {@link get} answers from a fresh result or joins the run in flight. */
export class CachedCheck {
  private last: { readonly check: Check; readonly at: number } | null = null;
  private running: Promise<Check> | null = null;

  /**
   * @param spec the check
   * @param now clock, epoch ms
   * @param token the bot token, scrubbed from failure details (errors may quote URLs)
   */
  constructor(
    readonly spec: CheckSpec,
    private readonly now: () => number = Date.now,
    private readonly token?: string,
  ) {}

  /** The name of the check. */
  get name(): string {
    return this.spec.name;
  }

  /** The last result and when it was taken (epoch ms), or null before the first run. */
  peek(): { readonly check: Check; readonly at: number } | null {
    return this.last;
  }

  /** Forget the cached result: the next {@link get} runs the check (a phase change made it stale). */
  invalidate(): void {
    this.last = null;
  }

  /** The check's verdict: cached when younger than ttlMs, else one (shared) bounded run. */
  get(): Promise<Check> {
    const ttl = typeof this.spec.ttlMs === "function" ? this.spec.ttlMs() : this.spec.ttlMs;
    if (this.last && this.now() - this.last.at < ttl) return Promise.resolve(this.last.check);
    this.running ??= this.runBounded().finally(() => (this.running = null));
    return this.running;
  }

  private async runBounded(): Promise<Check> {
    const ctl = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<Check>((resolve) => {
      timer = setTimeout(() => {
        ctl.abort(new Error("deadline"));
        resolve({ ok: false, detail: `no result within ${this.spec.deadlineMs / 1000} s` });
      }, this.spec.deadlineMs);
    });
    let check: Check;
    try {
      check = await Promise.race([Promise.resolve().then(() => this.spec.run(ctl.signal)), late]);
    } catch (err) {
      check = { ok: false, detail: redactSecrets(err instanceof Error ? err.message : String(err), this.token) };
    } finally {
      clearTimeout(timer);
    }
    this.last = { check, at: this.now() };
    return check;
  }
}

/** Ask every check (in parallel); the body's `checks` object, in the given order. */
export async function runChecks(checks: readonly CachedCheck[]): Promise<Record<string, Check>> {
  const results = await Promise.all(checks.map((c) => c.get()));
  return Object.fromEntries(checks.map((c, i) => [c.name, results[i]!]));
}
