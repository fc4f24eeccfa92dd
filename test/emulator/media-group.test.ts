/**
 * sendMediaGroup as the server answers it (TBA process_send_media_group_query / get_input_media, TDLib
 * check_message_group_message_contents): albums of uploads (attach://) and file_ids, one media_group_id, a
 * caption per item, reply_parameters; the exact errors; one rate unit per message of the album.
 */
import { Api, GrammyError, InputFile } from "grammy";
import { afterEach, describe, expect, test } from "vitest";
import { startEmulator, type Emulator } from "./index.ts";
import { rawCall } from "./raw-call.ts";

let em: Emulator | undefined;
afterEach(async () => {
  await em?.close();
  em = undefined;
});

const file = (n: number, name = `part-${n}.txt`) => new InputFile(new TextEncoder().encode(`result ${n}\n`.repeat(20)), name);
/** media_group_id of a sent message (grammY's album types do not all declare it). */
const groupOf = (m: unknown) => (m as { media_group_id?: string }).media_group_id;
const doc = (media: string, extra: Record<string, unknown> = {}) => ({ type: "document", media, ...extra });

/** A manual clock (rate-limit tests must not depend on request latency). */
function manualClock(start = Date.UTC(2026, 0, 1)) {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

describe("sendMediaGroup", () => {
  test("an album of uploaded documents: one call, n messages, one media_group_id, captions, replies, file_ids that re-send", async () => {
    em = await startEmulator({ rateLimits: false });
    const api = new Api(em.token, { apiRoot: em.apiRoot });
    const u = em.user();
    const original = await u.sendText("please convert");
    const msgs = await api.sendMediaGroup(u.chatId, [
      { type: "document", media: file(1) },
      { type: "document", media: file(2) },
      { type: "document", media: file(3), caption: "Job #7: <b>3 results</b>", parse_mode: "HTML" },
    ], { reply_parameters: { message_id: original.message_id } });
    expect(em.count("sendMediaGroup")).toBe(1);
    expect(msgs).toHaveLength(3);
    const group = groupOf(msgs[0]);
    expect(typeof group).toBe("string");
    expect(msgs.map(groupOf)).toEqual([group, group, group]);
    expect(msgs.map((m) => (m as { document?: { file_name?: string } }).document?.file_name)).toEqual(["part-1.txt", "part-2.txt", "part-3.txt"]);
    expect(msgs.map((m) => m.caption)).toEqual([undefined, undefined, "Job #7: 3 results"]);
    expect(msgs[2]!.caption_entities).toEqual([{ type: "bold", offset: 8, length: 9 }]);
    expect(msgs.map((m) => m.reply_to_message?.message_id)).toEqual([original.message_id, original.message_id, original.message_id]);
    const shown = u.messages();
    expect(shown.map((m) => [m.document?.file_name, m.media_group_id, m.reply_to])).toEqual([
      ["part-1.txt", group, original.message_id],
      ["part-2.txt", group, original.message_id],
      ["part-3.txt", group, original.message_id],
    ]);
    // the returned file_ids send the same files again, as an album of file_ids
    const ids = msgs.map((m) => (m as { document: { file_id: string } }).document.file_id);
    const again = await api.sendMediaGroup(u.chatId, ids.map((id) => ({ type: "document" as const, media: id })));
    expect(again.map((m) => (m as { document: { file_unique_id: string } }).document.file_unique_id)).toEqual(msgs.map((m) => (m as { document: { file_unique_id: string } }).document.file_unique_id));
    expect(groupOf(again[0])).not.toBe(group);
  });

  test("one item is accepted (TBA does not check the documented 2) and sent without a media_group_id", async () => {
    em = await startEmulator({ rateLimits: false });
    const api = new Api(em.token, { apiRoot: em.apiRoot });
    const u = em.user();
    const [m] = await api.sendMediaGroup(u.chatId, [{ type: "document", media: file(1) }]);
    expect(groupOf(m)).toBeUndefined();
    expect(u.messages()).toHaveLength(1);
  });

  test("errors as the server words them, in its order; nothing is sent", async () => {
    em = await startEmulator({ rateLimits: false });
    const u = em.user();
    const call = async (params: Record<string, unknown>) => {
      const r = await rawCall(em!, "sendMediaGroup", { chat_id: u.chatId, ...params });
      return [r.status, r.body.description];
    };
    const docId = (await new Api(em.token, { apiRoot: em.apiRoot }).sendDocument(u.chatId, file(9))).document.file_id;
    const photoLike = doc(docId, { type: "photo" });
    const cases: Array<[Record<string, unknown>, [number, string]]> = [
      [{}, [400, 'Bad Request: parameter "media" is required']],
      [{ media: "[not json" }, [400, "Bad Request: can't parse media JSON object"]],
      [{ media: { type: "document" } }, [400, "Bad Request: expected an Array of InputMedia"]],
      [{ media: [42] }, [400, "Bad Request: can't parse InputMedia: expected an Object"]],
      [{ media: [{ media: docId }] }, [400, "Bad Request: can't parse InputMedia: Can't find field \"type\""]],
      [{ media: [{ type: 5, media: docId }] }, [400, "Bad Request: can't parse InputMedia: Field \"type\" must be of type String"]],
      [{ media: [doc(docId, { type: "animation" })] }, [400, "Bad Request: can't parse InputMedia: type \"animation\" can't be used in sendMediaGroup"]],
      [{ media: [doc(docId, { type: "sticker" })] }, [400, "Bad Request: can't parse InputMedia: type \"sticker\" is unsupported"]],
      [{ media: [doc("attach://missing")] }, [400, "Bad Request: can't parse InputMedia: media not found"]],
      [{ media: [{ type: "document" }] }, [400, "Bad Request: can't parse InputMedia: media not found"]],
      [{ media: [doc(docId, { caption: "<b>x", parse_mode: "HTML" })] }, [400, "Bad Request: can't parse InputMedia: can't parse entities: Can't find end tag corresponding to start tag \"b\""]],
      [{ media: [] }, [400, "Bad Request: there are no messages to send"]],
      [{ media: Array.from({ length: 11 }, () => doc(docId)) }, [400, "Bad Request: too many messages to send as an album"]],
      [{ media: [doc(docId), doc(docId, { caption: "x".repeat(1025) })] }, [400, "Bad Request: message caption is too long"]],
      [{ media: [doc(docId), photoLike] }, [400, "Bad Request: can't use file of type Document as Photo"]],
      [{ media: [doc("not-a-file-id")] }, [400, "Bad Request: wrong file identifier/HTTP URL specified"]],
      [{ media: [doc(docId)], chat_id: 1 }, [400, "Bad Request: chat not found"]],
    ];
    for (const [params, want] of cases) expect(await call(params), JSON.stringify(params).slice(0, 120)).toEqual(want);
    // a photo and a document in one album: TDLib refuses to mix documents with other media
    const api = new Api(em.token, { apiRoot: em.apiRoot });
    const photo = await (await import("sharp")).default({ create: { width: 8, height: 8, channels: 3, background: "#123" } }).png().toBuffer();
    const mixed = await api.sendMediaGroup(u.chatId, [{ type: "photo", media: new InputFile(photo, "p.png") }, { type: "document", media: file(1) }] as never).catch((e: unknown) => e);
    expect(mixed).toBeInstanceOf(GrammyError);
    expect((mixed as GrammyError).description).toBe("Bad Request: document can't be mixed with other media types");
    u.block();
    expect(await call({ media: [doc(docId)] })).toEqual([403, "Forbidden: bot was blocked by the user"]);
    expect(u.messages()).toHaveLength(1); // only the sendDocument above
  });

  test("an album of n draws n units: admitted with one unit left, the chat and the bot wait for the rest", async () => {
    const clock = manualClock();
    em = await startEmulator({ now: clock.now, rateLimits: { perChatBurst: 3, perChatPerSec: 1, globalPerSec: 30 } });
    const u = em.user();
    const media = Array.from({ length: 3 }, (_, i) => doc(`x${i}`));
    const api = new Api(em.token, { apiRoot: em.apiRoot });
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await api.sendDocument(u.chatId, file(i))).document.file_id); // the 3-burst is spent
    clock.advance(1000); // one unit back
    media.splice(0, 3, ...ids.map((id) => doc(id)));
    expect((await rawCall(em, "sendMediaGroup", { chat_id: u.chatId, media })).status).toBe(200); // admitted: 1 unit, takes 3
    clock.advance(2000); // -2 + 2 = 0 units: still nothing
    const early = await rawCall(em, "sendMessage", { chat_id: u.chatId, text: "Done" });
    expect([early.status, early.body.parameters?.retry_after]).toEqual([429, 1]);
    clock.advance(1000);
    expect((await rawCall(em, "sendMessage", { chat_id: u.chatId, text: "Done" })).status).toBe(200);
  });
});
