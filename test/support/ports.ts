/** TCP ports for tests that must name a port before something listens on it. */

/**
 * A port on 127.0.0.1 that was free a moment ago (bound, read, released). Another process may take it
 * in between: callers that bind it themselves retry on EADDRINUSE.
 */
export function freePort(): number {
  const s = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const p = s.port!;
  s.stop(true);
  return p;
}
