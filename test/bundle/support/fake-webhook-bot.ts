/**
 * Stands in for the bot in the webhook tests (test/bundle/webhook-nginx.test.ts): started by the
 * test's systemctl stub on `restart docket.service`, it reads the throwaway root's docket.env
 * as the bot does and serves what nginx and install.sh talk to — `GET /healthz` on HTTP_PORT,
 * and `POST WEBHOOK_PATH` on WEBHOOK_PORT (200 only with the right secret header, like grammY's
 * webhookCallback; none without WEBHOOK_PORT). Every webhook request is appended to `<log>` as one JSON line.
 * Usage: bun fake-webhook-bot.ts <root> <log>
 */
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";

const [root, log] = process.argv.slice(2) as [string, string];
const env = Object.fromEntries(
  readFileSync(join(root, "etc/docket/docket.env"), "utf8")
    .split("\n")
    .filter((l) => /^[A-Z_]+=/.test(l))
    .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
);
Bun.serve({ hostname: "127.0.0.1", port: Number(env.HTTP_PORT), fetch: (req) => (new URL(req.url).pathname === "/healthz" ? Response.json({ ok: true }) : new Response("no", { status: 404 })) });
// Long polling (no WEBHOOK_PORT): no listener, as the bot.
if (env.WEBHOOK_PORT) Bun.serve({
  hostname: "127.0.0.1",
  port: Number(env.WEBHOOK_PORT),
  async fetch(req) {
    const path = new URL(req.url).pathname;
    const secretOk = req.headers.get("x-telegram-bot-api-secret-token") === env.WEBHOOK_SECRET;
    appendFileSync(log, JSON.stringify({ port: Number(env.WEBHOOK_PORT), path, secretOk, body: await req.text() }) + "\n");
    if (req.method !== "POST" || path !== env.WEBHOOK_PATH) return new Response("Not Found", { status: 404 });
    return secretOk ? new Response(null, { status: 200 }) : new Response("secret token is wrong", { status: 401 });
  },
});
