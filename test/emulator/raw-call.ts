/**
 * Raw HTTP access to an emulator for tests that need to see the exact envelope, status and headers
 * (grammY hides them behind GrammyError), and a helper to read GrammyError fields.
 */
import { GrammyError } from "grammy";
import type { Emulator } from "./types.ts";

/** The answer of a raw call: HTTP status, parsed JSON body and the Retry-After header. */
export interface RawAnswer {
  status: number;
  body: { ok: boolean; result?: unknown; error_code?: number; description?: string; parameters?: { retry_after?: number } };
  retryAfter: string | null;
}

/**
 * Calls `method` over HTTP with params encoded as a JSON body, an urlencoded body, or a GET query string.
 * Objects inside params are JSON-encoded for form/query encodings (like the Bot API expects).
 */
export async function rawCall(
  em: Pick<Emulator, "apiRoot" | "token">,
  method: string,
  params: Record<string, unknown> = {},
  as: "json" | "form" | "query" = "json",
): Promise<RawAnswer> {
  const flat = Object.fromEntries(
    Object.entries(params).map(([k, v]) => [k, typeof v === "object" ? JSON.stringify(v) : String(v)]),
  );
  let url = `${em.apiRoot}/bot${em.token}/${method}`;
  let init: RequestInit = { method: "POST" };
  if (as === "json") init = { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(params) };
  else if (as === "form") {
    init = {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(flat).toString(),
    };
  } else {
    url += `?${new URLSearchParams(flat).toString()}`;
    init = { method: "GET" };
  }
  const res = await fetch(url, init);
  return { status: res.status, body: (await res.json()) as RawAnswer["body"], retryAfter: res.headers.get("retry-after") };
}

/** Awaits a grammY call that must fail; returns its error_code, description and retry_after. @throws if it succeeds. */
export async function apiFailure(p: Promise<unknown>): Promise<{ code: number; description: string; retryAfter?: number }> {
  try {
    await p;
  } catch (e) {
    if (e instanceof GrammyError) {
      return {
        code: e.error_code,
        description: e.description,
        ...(e.parameters.retry_after !== undefined ? { retryAfter: e.parameters.retry_after } : {}),
      };
    }
    throw e;
  }
  throw new Error("expected the Bot API call to fail, but it succeeded");
}
