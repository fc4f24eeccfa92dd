/**
 * docket's Bot API emulator: a strict fake of the Telegram Bot API (cloud or `--local` server) over real HTTP
 * on 127.0.0.1, for the demo, end-to-end tests and outbox tests. Real grammY talks to it unchanged:
 *
 *   const em = await startEmulator();
 *   const bot = new Bot(em.token, { client: { apiRoot: em.apiRoot } });
 *   const alice = em.user({ language_code: "ru" });
 *   await alice.sendDocument({ path: "base.pdf" });
 *   await alice.waitFor((m) => m.some((x) => x.text?.includes("ready")));
 *   await em.close();
 *
 * Rules and exact strings: /work/shared/docs/botapi-facts.md; field cases BR-01..BR-04, BR-06, BR-08.
 * See test/emulator/README.md for the full behaviour list.
 */
import { Core } from "./core.ts";
import { canonicalMethod, execute, handle } from "./server.ts";
import type { Emulator, EmulatorOptions } from "./types.ts";
import { createGroup, createUser } from "./users.ts";

export type * from "./types.ts";
export { DEFAULT_TOKEN } from "./core.ts";
export { FILE_DOWNLOAD } from "./types.ts";
export { DEFAULT_RATE_LIMITS } from "./rate-limiter.ts";
export { CLOUD_DOWNLOAD_LIMIT, CLOUD_UPLOAD_LIMIT, LOCAL_UPLOAD_LIMIT } from "./file-store.ts";

/**
 * Starts an emulator on 127.0.0.1 (port 0 = random free port).
 * @throws Error when local mode lacks localDir or the port is taken.
 */
export async function startEmulator(opts: EmulatorOptions = {}): Promise<Emulator> {
  let core!: Core;
  core = new Core(opts, async (params) => {
    // A webhook reply body naming a method is executed like a request (not get*, setWebhook, deleteWebhook, close, logOut).
    const method = canonicalMethod(String(params.method));
    if (!method || /^(get|setWebhook$|deleteWebhook$|close$|logOut$)/.test(method)) return;
    const { method: _m, ...rest } = params;
    await execute(core, method, { params: rest, files: new Map() }, new AbortController().signal);
  });
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: opts.port ?? 0,
    // The emulator answers 413 itself (JSON envelope) from the mode's upload limit.
    maxRequestBodySize: 4 * 1024 ** 3,
    idleTimeout: 0,
    fetch: (req) => handle(core, req),
  });
  const apiRoot = `http://127.0.0.1:${server.port}`;
  const emulator: Emulator = {
    apiRoot,
    token: core.token,
    mode: core.mode,
    ...(core.localDir ? { localDir: core.localDir } : {}),
    botInfo: core.botUser,
    user: (init) => createUser(core, init),
    group: (init) => createGroup(core, init),
    failNext: (method, error, o) => core.addFailure(method, error, o),
    stallNext: (method, o = {}) => void core.stalls.push({ method: method.toLowerCase(), times: o.times ?? 1, ...(o.chatId !== undefined ? { chatId: o.chatId } : {}) }),
    failFileDownload: (times = 1) => core.files.failNextDownloads(times),
    faultFileDownload: (fault, times = 1) => core.files.addDownloadFault(fault, times),
    faultLocalFile: (fault, times = 1) => {
      if (core.mode !== "local") throw new Error("emulator: faultLocalFile needs local mode");
      core.files.addLocalFault(fault, times);
    },
    holdGetFile: () => core.files.holdGetFile(),
    expireFileLinks: () => core.files.expireLinks(),
    redeliver: (updateId) => core.updates.redeliver(updateId),
    calls: core.calls,
    count: (method, chatId) =>
      core.calls.filter((c) => c.method.toLowerCase() === method.toLowerCase() && (chatId === undefined || c.chatId === chatId))
        .length,
    uploaded: (fileId) => core.files.uploaded(fileId),
    setRateLimits: (r) => core.limiter.set(r),
    pendingUpdates: () => core.updates.pending,
    webhookDeliveries: core.updates.deliveries,
    close: async () => {
      core.updates.close();
      await server.stop(true);
      await core.files.close();
    },
  };
  return emulator;
}
