/** bot/log.ts: the token and token-bearing URLs never reach a log line; journald priorities. */
import { describe, expect, test } from "vitest";
import { createLogger, redactSecrets } from "../../bot/log.ts";

const TOKEN = "123456789:AAE-test-token-docket-log_secret";

describe("redaction at the logger", () => {
  test("download URLs, API URLs and errors are scrubbed", () => {
    const lines: string[] = [];
    const log = createLogger({ token: TOKEN, write: (l) => void lines.push(l), journald: false });
    log.info({ url: `http://127.0.0.1:1/file/bot${TOKEN}/documents/file_1.pdf`, nested: { list: [`/bot${TOKEN}/getFile`] } }, `GET https://api.telegram.org/bot${TOKEN}/getFile`);
    log.error({ err: new Error(`fetch failed: http://x/file/bot${TOKEN}/a`) }, "boom");
    log.warn(`plain ${TOKEN}`);
    const all = lines.join("");
    expect(all).not.toContain(TOKEN);
    expect(all).not.toContain("AAE-test-token");
    expect(all).toContain("/file/bot<redacted>/documents/file_1.pdf");
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[1]!).err.type).toBe("Error");
  });
  test("token-shaped strings are scrubbed even when not the configured token", () => {
    expect(redactSecrets("x 987654321:ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ y")).toBe("x <redacted> y");
  });
  test("journald priority prefixes follow the level", () => {
    const lines: string[] = [];
    const log = createLogger({ write: (l) => void lines.push(l), journald: true, level: "debug" });
    log.debug("d");
    log.info("i");
    log.warn("w");
    log.error("e");
    log.fatal("f");
    expect(lines.map((l) => l.slice(0, 3))).toEqual(["<7>", "<6>", "<4>", "<3>", "<2>"]);
  });
});
