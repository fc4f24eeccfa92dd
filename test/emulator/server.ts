/**
 * HTTP front of the emulator (Bun.serve on 127.0.0.1): routes `/bot<token>/<method>` (GET/POST, method names
 * case-insensitive) and, in cloud mode, `/file/bot<token>/<file_path>`; answers with the Bot API envelope,
 * HTTP status = error_code, `Retry-After` on 429 (botapi-facts.md §3, checklist 1–3). Every method request and
 * every file download is recorded in Core.calls; the token is never logged.
 */
import { ApiError, E } from "./api-error.ts";
import { Args } from "./args.ts";
import { OkWithDescription, type Core, type Ctx, type Handler } from "./core.ts";
import { uploadLimit, fileMethods } from "./methods-files.ts";
import { botMethods, KNOWN_UNIMPLEMENTED, unimplemented } from "./methods-bot.ts";
import { messageMethods } from "./methods-messages.ts";
import { paramsForLog, parseRequest, type ParsedRequest } from "./request.ts";
import { FILE_DOWNLOAD, type ApiCall } from "./types.ts";
import { faultyBody } from "./download-faults.ts";

const HANDLERS: Record<string, Handler> = { ...botMethods, ...messageMethods, ...fileMethods };
const CANONICAL = new Map<string, string>(
  [...Object.keys(HANDLERS), ...KNOWN_UNIMPLEMENTED].map((m) => [m.toLowerCase(), m]),
);

/** Canonical spelling of a method name (case-insensitive), or undefined for names Telegram does not have. */
export function canonicalMethod(name: string): string | undefined {
  return CANONICAL.get(name.toLowerCase());
}

function envelope(status: number, body: Record<string, unknown>, retryAfter?: number): Response {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (retryAfter !== undefined) headers["retry-after"] = String(retryAfter);
  return new Response(JSON.stringify(body), { status, headers });
}

function errorResponse(e: ApiError): Response {
  const body: Record<string, unknown> = { ok: false, error_code: e.code, description: e.description };
  if (e.retryAfter !== undefined) body.parameters = { retry_after: e.retryAfter };
  return envelope(e.code, body, e.retryAfter);
}

/**
 * Runs one method call: injected failures first, then the handler; records the call.
 * @returns the HTTP response with the Bot API envelope.
 */
export async function execute(core: Core, method: string, req: ParsedRequest, signal: AbortSignal): Promise<Response> {
  const now = core.now();
  const args = new Args(req.params);
  const c: Ctx = { core, args, files: req.files, now, signal };
  const hintedChat = core.chatIdOf(args.str("chat_id"));
  const call: ApiCall = { method, params: paramsForLog(req), at: now, status: 200, ok: true };
  if (hintedChat !== undefined) call.chatId = hintedChat;
  core.calls.push(call);
  let res: Response;
  try {
    if (core.takeStall(method, hintedChat)) {
      // A request that never gets an answer (a stalled connection): held until the client gives up.
      Object.assign(call, { status: 499, ok: false, description: "stalled (test fault): no answer until the client gave up" });
      await new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve(), { once: true })));
      return new Response(null, { status: 499 });
    }
    const injected = core.takeFailure(method, req.params, hintedChat);
    if (injected) {
      if (injected.error_code === 429 && injected.retry_after !== undefined && hintedChat !== undefined) {
        core.limiter.hold(hintedChat, now + injected.retry_after * 1000);
      }
      throw new ApiError(injected.error_code, injected.description, injected.retry_after);
    }
    const handler = HANDLERS[method];
    if (!handler) throw unimplemented(method);
    const out = await handler(c);
    const body: Record<string, unknown> = { ok: true };
    if (out instanceof OkWithDescription) {
      body.result = out.result;
      body.description = out.description;
      call.description = out.description;
    } else body.result = out;
    res = envelope(200, body);
  } catch (e) {
    const err = e instanceof ApiError ? e : internalError(e);
    call.status = err.code;
    call.ok = false;
    call.description = err.description;
    if (err.retryAfter !== undefined) call.retryAfter = err.retryAfter;
    res = errorResponse(err);
  }
  if (c.chatId !== undefined) call.chatId = c.chatId;
  return res;
}

function internalError(e: unknown): ApiError {
  // A bug in the emulator: say so loudly, without request URLs (they carry the token).
  console.error("emulator internal error:", e instanceof Error ? e.stack : e);
  return new ApiError(500, `Internal Server Error: emulator bug: ${e instanceof Error ? e.message : String(e)}`);
}

/** Records a request that failed before reaching a handler (routing, auth, body errors). */
function recordEarly(core: Core, method: string, err: ApiError): Response {
  core.calls.push({ method, params: {}, at: core.now(), status: err.code, ok: false, description: err.description });
  return errorResponse(err);
}

/** Handles one HTTP request. */
export async function handle(core: Core, req: Request): Promise<Response> {
  const url = new URL(req.url);
  const path = url.pathname;
  if (path.startsWith("/file/")) return serveFile(core, path, req.signal);
  const m = /^\/bot([^/]*)\/([^/]*)$/.exec(path);
  if (!m) return errorResponse(new ApiError(404, E.notFound));
  const [, token = "", rawMethod = ""] = m;
  if (token !== core.token) {
    const malformed = !/^\d+:[A-Za-z0-9_-]{20,}$/.test(token);
    return recordEarly(core, rawMethod, new ApiError(401, malformed && core.mode === "local" ? E.invalidToken : E.unauthorized));
  }
  const method = canonicalMethod(rawMethod);
  if (!method) return recordEarly(core, rawMethod, new ApiError(404, E.methodNotFound));
  const refused = core.instance.admit(method, core.now());
  if (refused) return recordEarly(core, method, refused);
  let parsed: ParsedRequest;
  try {
    parsed = await parseRequest(req, uploadLimit(core) + (2 << 20));
  } catch (e) {
    return recordEarly(core, method, e instanceof ApiError ? e : new ApiError(400, "Bad Request: can't parse request"));
  }
  return execute(core, method, parsed, req.signal);
}

/**
 * `/file/bot<token>/<file_path>`: cloud only. Unknown, expired or failed-on-purpose paths answer
 * 404 {"ok":false,"error_code":404,"description":"Not Found"}; a local server never serves files.
 * A queued fault (Emulator.faultFileDownload) shapes the body of a download that would be served.
 * Every request is recorded as method FILE_DOWNLOAD with the file_path only (the token is dropped).
 */
function serveFile(core: Core, path: string, signal: AbortSignal): Response {
  const m = /^\/file\/bot[^/]*\/(.*)$/s.exec(path);
  let filePath: string | null = null;
  try {
    filePath = m ? decodeURIComponent(m[1]!) : null;
  } catch {
    filePath = m ? m[1]! : null;
  }
  // A local-mode absolute path glued onto the route carries the token (`<dir>/<token>/documents/…`): redact it.
  const shown = filePath === null ? null : filePath.split(core.token).join("<token>");
  const call: ApiCall = { method: FILE_DOWNLOAD, params: { file_path: shown }, at: core.now(), status: 200, ok: true };
  core.calls.push(call);
  const notFound = () => {
    Object.assign(call, { status: 404, ok: false, description: E.notFound });
    return errorResponse(new ApiError(404, E.notFound));
  };
  if (core.mode === "local") return notFound();
  if (!path.startsWith(`/file/bot${core.token}/`) || filePath === null) return notFound();
  const body = core.files.download(filePath, call.at);
  if (!body) return notFound();
  const fault = core.files.takeDownloadFault();
  if (fault) call.params.fault = fault.kind;
  const headers = { "content-type": "application/octet-stream" };
  return new Response((fault ? faultyBody(body, fault, signal) : body) as BodyInit, { status: 200, headers });
}
