/**
 * Bench helper: runs the project's Bot API emulator (default enforced limits) in its own process,
 * so the parent measures only the client's CPU. Talks over Bun IPC:
 *   { id, cmd: "users", n }                        → { id, apiRoot, token, chatIds }
 *   { id, cmd: "report", finals: {chatId: text} }  → { id, methods, n429, visibleAt: {chatId: epoch ms | null} }
 *   { id, cmd: "burst", withinMs }                 → { id, sent: {chatId: epoch ms} }  every user sends one small document
 *   { id, cmd: "jobs", jobs: {chatId: jobId}, waitMs } → { id, doneAt: {chatId: epoch ms | null}, chatBound, byMethod, n429 }
 */
import { FILE_DOWNLOAD, startEmulator, type ChatUser } from "../../test/emulator/index.ts";

const em = await startEmulator();
const users: ChatUser[] = [];

/** The first successful call in `chatId` that shows `prefix`. */
const shownAt = (chatId: number, prefix: string) =>
  em.calls.find((c) => c.ok && c.chatId === chatId && (c.method === "sendMessage" || c.method === "editMessageText") && String(c.params.text).trim().startsWith(prefix))?.at ?? null;

process.on("message", async (raw: unknown) => {
  const msg = raw as { id: number; cmd: string; n?: number; finals?: Record<string, string>; withinMs?: number; jobs?: Record<string, number>; waitMs?: number };
  if (msg.cmd === "users") {
    for (let i = 0; i < (msg.n ?? 1); i++) users.push(em.user({ language_code: "en" }));
    process.send!({ id: msg.id, apiRoot: em.apiRoot, token: em.token, chatIds: users.map((u) => u.chatId) });
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
  } else if (msg.cmd === "burst") {
    const sent: Record<string, number> = {};
    const gap = (msg.withinMs ?? 1000) / Math.max(1, users.length);
    for (const [i, u] of users.entries()) {
      sent[String(u.chatId)] = Date.now();
      await u.sendDocument({ bytes: Uint8Array.from({ length: 1500 + i }, (_, k) => (k * 31 + i * 7 + (k >> 8)) & 255), file_name: `f${i}.bin` });
      await Bun.sleep(gap);
    }
    process.send!({ id: msg.id, sent });
  } else if (msg.cmd === "jobs") {
    const until = Date.now() + (msg.waitMs ?? 60_000);
    const doneAt: Record<string, number | null> = {};
    for (const [chatId, jobId] of Object.entries(msg.jobs ?? {})) {
      while ((doneAt[chatId] = shownAt(Number(chatId), `Done, job #${jobId}`)) === null && Date.now() < until) await Bun.sleep(50);
    }
    const chatBound = em.calls.filter((c) => c.chatId !== undefined && c.method !== "getFile" && c.method !== FILE_DOWNLOAD);
    const byMethod: Record<string, number> = {};
    for (const c of chatBound) byMethod[c.method] = (byMethod[c.method] ?? 0) + 1;
    process.send!({ id: msg.id, doneAt, chatBound: chatBound.length, byMethod, n429: em.calls.filter((c) => c.status === 429).length });
  } else if (msg.cmd === "close") {
    void em.close().then(() => process.exit(0));
  }
});
process.send!({ id: 0, ready: true });
