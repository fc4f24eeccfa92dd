/**
 * vitest lifecycle helper for the emulator's own tests: one emulator and a real grammY Api
 * against it per file or describe block, closed after the block.
 */
import { Api } from "grammy";
import { afterAll, beforeAll } from "vitest";
import { startEmulator, type Emulator, type EmulatorOptions } from "./index.ts";

/**
 * Start an emulator in `beforeAll` (options, or a thunk read then, so it may use paths made by an
 * outer `beforeAll`; default: rate limits off) and hand it with `new Api(token, { apiRoot })` to `set`;
 * close it in `afterAll`.
 */
export function useEmulator(set: (em: Emulator, api: Api) => void, options: EmulatorOptions | (() => EmulatorOptions) = { rateLimits: false }): void {
  let em: Emulator | undefined;
  beforeAll(async () => {
    em = await startEmulator(typeof options === "function" ? options() : options);
    set(em, new Api(em.token, { apiRoot: em.apiRoot }));
  });
  afterAll(async () => {
    await em?.close();
  });
}
