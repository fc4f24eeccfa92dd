/**
 * Bench helper: runs the project's Bot API emulator (default enforced limits) in its own process,
 * so the parent measures only the client's CPU. Talks over Bun IPC:
 *   { id, cmd: "users", n }                → { id, apiRoot, token, chatIds }
 *   { id, cmd: "report", finals: {chatId: text} } → { id, methods, n429, visibleAt: {chatId: epoch ms | null} }
 */
import { startEmulator } from "../../test/emulator/index.ts";

const em = await startEmulator();

process.on("message", (raw: unknown) => {
  const msg = raw as { id: number; cmd: string; n?: number; finals?: Record<string, string> };
  if (msg.cmd === "users") {
    const chatIds = Array.from({ length: msg.n ?? 1 }, () => em.user().chatId);
    process.send!({ id: msg.id, apiRoot: em.apiRoot, token: em.token, chatIds });
  } else if (msg.cmd === "report") {
    const methods: Record<string, number> = {};
    for (const c of em.calls) methods[c.method] = (methods[c.method] ?? 0) + 1;
    const n429 = em.calls.filter((c) => c.status === 429).length;
    const visibleAt: Record<string, number | null> = {};
    for (const [chatId, text] of Object.entries(msg.finals ?? {})) {
      const hit = em.calls.find(
        (c) => c.ok && c.chatId === Number(chatId) && (c.method === "sendMessage" || c.method === "editMessageText") && String(c.params.text).trim() === text,
      );
      visibleAt[chatId] = hit ? hit.at : null;
    }
    process.send!({ id: msg.id, methods, n429, visibleAt });
  } else if (msg.cmd === "close") {
    void em.close().then(() => process.exit(0));
  }
});
process.send!({ id: 0, ready: true });
