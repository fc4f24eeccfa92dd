/**
 * Injected faults of cloud file downloads (`/file/bot<token>/<file_path>`), for tests of a client's
 * timeouts and size checks: a body that stalls, a dropped connection, a body that ends early, a body that
 * trickles. Only an explicit `Emulator.faultFileDownload()` call turns one on; a download without one is
 * served whole, like Telegram.
 */
import type { FileDownloadFault } from "./types.ts";

/** Size of the chunks the emulator sends (bytes), as a server writes a body in pieces. */
const CHUNK = 64 * 1024;
/** Pause before a `reset` drops the connection, ms: the bytes sent before it reach the client first. */
const RESET_AFTER_MS = 50;

/** Reads `source` as a stream of chunks of at most {@link CHUNK} bytes. */
async function* chunksOf(source: Blob | Uint8Array, max = CHUNK): AsyncGenerator<Uint8Array> {
  if (source instanceof Uint8Array) {
    for (let i = 0; i < source.byteLength; i += max) yield source.subarray(i, Math.min(source.byteLength, i + max));
    return;
  }
  for await (const piece of source.stream() as unknown as AsyncIterable<Uint8Array>) {
    for (let i = 0; i < piece.byteLength; i += max) yield piece.subarray(i, Math.min(piece.byteLength, i + max));
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
}

/**
 * The response body of a download with `fault` applied.
 * - `stall`: the first `afterBytes` bytes, then nothing; the connection stays open until the client gives
 *   up (its disconnect aborts `signal`) or the emulator closes.
 * - `reset`: the first `afterBytes` bytes, then the connection is dropped (the client sees a network error,
 *   e.g. ECONNRESET).
 * - `end`: the first `afterBytes` bytes, then a clean end (a short body).
 * - `trickle`: the whole file, `chunkBytes` every `everyMs` (bytes keep coming, slowly).
 * @param signal the request's signal (aborted when the client disconnects)
 */
export function faultyBody(source: Blob | Uint8Array, fault: FileDownloadFault, signal: AbortSignal): ReadableStream<Uint8Array> {
  const limit = fault.kind === "trickle" ? Infinity : Math.max(0, fault.afterBytes ?? 0);
  const chunks = chunksOf(source, fault.kind === "trickle" ? Math.max(1, fault.chunkBytes) : CHUNK);
  let sent = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (signal.aborted) return controller.close();
      if (sent >= limit) return finish(controller);
      if (fault.kind === "trickle" && sent > 0) await pause(fault.everyMs, signal);
      const next = await chunks.next();
      if (next.done) return controller.close();
      const piece = next.value.subarray(0, Math.min(next.value.byteLength, limit - sent));
      sent += piece.byteLength;
      controller.enqueue(piece);
    },
    cancel() {
      void chunks.return(undefined);
    },
  });

  async function finish(controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    if (fault.kind === "end") return controller.close();
    if (fault.kind === "reset") {
      // Let the bytes already sent reach the client first, then drop the connection (no argument: Bun
      // closes the socket without printing a server-side error).
      await pause(RESET_AFTER_MS, signal);
      return controller.error();
    }
    await new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      signal.addEventListener("abort", () => resolve(), { once: true });
    });
    controller.close();
  }
}
