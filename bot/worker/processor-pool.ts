/**
 * The bot's processor pool (processors/pool/, issue 12): sized and tuned from the config, its
 * events in the journal. Routine child starts and replacements are debug lines; a child that dies
 * on its own is a warning; children that cannot start at all are ONE error line naming the cause
 * and the fix, repeated only after a child has started again.
 */
import type { Config } from "../config.ts";
import type { Logger } from "../log.ts";
import { ProcessorPool, type PoolEvent } from "../../processors/pool/index.ts";

/** A journal writer for pool events; see the module comment. */
export function poolEventLogger(log: Logger): (event: PoolEvent) => void {
  let failing = false;
  return (e) => {
    if (e.type === "started") {
      failing = false;
      log.debug({ pid: e.pid, ms: e.ms, pdf_ok: e.pdfOk }, "processor child ready");
    } else if (e.type === "retired") {
      log.debug({ pid: e.pid, reason: e.reason, jobs: e.jobs, rss_mb: Math.round(e.rssBytes / 2 ** 20) }, "processor child replaced");
    } else if (e.type === "killed") {
      log.debug({ pid: e.pid, cause: e.cause, jobs: e.jobs }, "processor child killed; a fresh one replaces it");
    } else if (e.type === "crashed") {
      log.warn({ pid: e.pid, how: e.how, busy: e.busy, stderr: e.stderr }, "processor child died; a fresh one replaces it");
    } else if (!failing) {
      failing = true;
      log.error({ detail: e.detail }, "processor children cannot start: jobs fail with processing_crashed until they can; check the install (`bun install`, free memory)");
    }
  };
}

/** The pool for `config` (nothing starts until {@link ProcessorPool.warm} or the first job). */
export function createProcessorPool(config: Config, log: Logger): ProcessorPool {
  return new ProcessorPool({
    settings: {
      size: config.processConcurrency,
      recycleJobs: config.processRecycleJobs,
      recycleRssBytes: config.processRecycleRssMb * 2 ** 20,
      idleMs: config.processIdleTimeoutMs,
    },
    onEvent: poolEventLogger(log),
  });
}
