/**
 * sharp/libvips error messages → reason codes (fixture README "Reject reasons";
 * field cases BR-14, BR-15, BR-21). Pinned by tests so a sharp upgrade that changes
 * a message shows up as a failing test, not as a silent policy change.
 */
import { ProcessingError } from "../types.ts";
import type { ReasonCode } from "../../bot/jobs/reasons.ts";

/** Which reason a libvips message means; `corrupt` when nothing more specific matches. */
export function reasonForSharpError(message: string): ReasonCode {
  if (/exceeds pixel limit/i.test(message)) return "too_many_pixels";
  if (/premature end|truncated|unexpected end of file|end of (file|stream)|not enough data|short read|bad seek/i.test(message)) return "truncated";
  if (/compression format has not been built in|not built with|unsupported.*(codec|compression)/i.test(message)) return "unsupported_type";
  return "corrupt";
}

/** Context for a sharp failure, used for the chat parameters. */
export interface ImageContext {
  readonly ext: string;
  readonly label: string;
  readonly width?: number;
  readonly height?: number;
}

/** Wrap a sharp failure as a ProcessingError with chat params {ext, label, size}. */
export function sharpFailure(err: unknown, ctx: ImageContext): ProcessingError {
  if (err instanceof ProcessingError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const size = ctx.width && ctx.height ? `${ctx.width}×${ctx.height}` : "none";
  return new ProcessingError(reasonForSharpError(message), { ext: ctx.ext, label: ctx.label, size }, `sharp: ${message.split("\n")[0]}`);
}
