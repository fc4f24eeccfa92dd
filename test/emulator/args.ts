/**
 * Typed access to Bot API request parameters, which arrive as strings (query, urlencoded, multipart) or as
 * JSON values; mirrors TBA's `get_integer_arg` (clamping) and JSON-object arguments.
 */
import { badRequest } from "./api-error.ts";

/** Parameter reader over one request's params. */
export class Args {
  constructor(readonly raw: Record<string, unknown>) {}

  /** True when the parameter is present and not null. */
  has(k: string): boolean {
    return this.raw[k] !== undefined && this.raw[k] !== null;
  }

  /** String value (numbers/booleans stringified, objects JSON-encoded); undefined when absent. */
  str(k: string): string | undefined {
    const v = this.raw[k];
    if (v === undefined || v === null) return undefined;
    if (typeof v === "string") return v;
    if (typeof v === "object") return JSON.stringify(v);
    return String(v);
  }

  /**
   * Integer value like TBA `get_integer_arg`: absent → def; non-numeric → 0; clamped to [min, max].
   */
  int(k: string, def: number, min = -Number.MAX_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER): number {
    const v = this.raw[k];
    let n: number;
    if (v === undefined || v === null || v === "") n = def;
    else if (typeof v === "number") n = Math.trunc(v);
    else {
      const m = /^\s*([+-]?\d+)/.exec(String(v));
      n = m ? Number(m[1]) : 0;
    }
    return Math.min(max, Math.max(min, n));
  }

  /** Boolean value: true, "true", "1", 1. */
  bool(k: string): boolean {
    const v = this.raw[k];
    return v === true || v === 1 || v === "true" || v === "1" || v === "True";
  }

  /**
   * JSON-object argument: JSON bodies carry objects, form bodies carry JSON strings.
   * @throws ApiError 400 "can't parse <what> JSON object" on invalid JSON.
   */
  json(k: string, what = k): unknown {
    const v = this.raw[k];
    if (v === undefined || v === null || v === "") return undefined;
    if (typeof v !== "string") return v;
    try {
      return JSON.parse(v);
    } catch {
      throw badRequest(`can't parse ${what} JSON object`);
    }
  }
}
