/**
 * The bot side of text recognition (issue 13): OcrState (the start-up self-check's outcome, one
 * journal line per change, rechecked while failing — with a fake clock and a fake check), and the
 * chat summary of what recognition did in both languages.
 */
import { describe, expect, test } from "vitest";
import { loadConfig } from "../../bot/config.ts";
import { createLogger } from "../../bot/log.ts";
import { ocrSummary } from "../../bot/status/texts.ts";
import { OcrState, RECHECK_MS } from "../../bot/worker/ocr-state.ts";
import type { OcrSelfCheck } from "../../processors/ocr/self-check.ts";
import type { OcrFacts } from "../../processors/ocr/types.ts";
import type { Facts } from "../../processors/types.ts";

const config = loadConfig({ BOT_TOKEN: "123456789:AAEhBOweik9ai2o4Ihv-XdK7Ju6N0r3j_ab", OCR_CONCURRENCY: "3" });

describe("OcrState", () => {
  test("fails → no options, one error line; rechecked only after RECHECK_MS, when a job asks; passes → options again, one info line", async () => {
    let now = 1_000_000;
    const answers: OcrSelfCheck[] = [{ ok: false, missing: "no rus" }, { ok: false, missing: "no rus" }, { ok: true, version: "5.3.0", languages: "rus+eng", ms: 5 }];
    const calls: string[] = [];
    const lines: Array<Record<string, unknown>> = [];
    const log = createLogger({ level: "debug", token: config.token, write: (l) => void lines.push(JSON.parse(l)), journald: false });
    const state = new OcrState(config, async (languages) => (calls.push(languages), answers.shift()!), log, () => now);
    expect(state.options(1000)).toMatchObject({ languages: "rus+eng", concurrency: 3 }); // before any check: assumed available
    await state.check();
    expect(state.options(1000)).toBeNull();
    now += RECHECK_MS - 1;
    expect(state.options(1000)).toBeNull();
    expect(calls).toEqual(["rus+eng"]);
    now += 1;
    expect(state.options(1000)).toBeNull(); // starts the recheck in the background
    await expect.poll(() => calls.length).toBe(2);
    now += RECHECK_MS;
    state.options(1000);
    await expect.poll(() => calls.length).toBe(3);
    await expect.poll(() => state.options(1000)).toEqual({ languages: "rus+eng", dpi: 300, maxPages: 500, pageBudgetMs: 60_000, totalMs: 1_800_000, concurrency: 3, searchableMaxBytes: 1000 });
    expect(lines.filter((l) => (l.level as number) >= 30).map((l) => [l.level, l.msg])).toEqual([
      [50, "OCR self-check FAILED: scanned pages will not be recognized until it passes (rechecked every 10 min); install the named package"],
      [30, "OCR self-check passed"],
    ]);
  });
});

describe("ocrSummary", () => {
  const ocr = (extra: Partial<OcrFacts> = {}): OcrFacts => ({ languages: "rus+eng", needed: 12, recognized: 11, pageBudgetS: 60, overBudget: [], failed: [], direct: [], noImage: [], ...extra });
  const facts = (extra: Record<string, unknown>): Facts => ({ type: "application/pdf", label: "PDF document", pages: 12, recognizedChars: 5400, ...extra });

  test.each([
    ["en", { ocr: ocr() }, ["11 pages recognized (5,400 characters)"]],
    ["ru", { ocr: ocr() }, ["распознано 11 страниц (5\u00a0400 символов)"]],
    ["ru", { ocr: ocr({ recognized: 1 }) }, ["распознана 1 страница (5\u00a0400 символов)"]],
    ["ru", { ocr: ocr({ recognized: 3 }) }, ["распознаны 3 страницы (5\u00a0400 символов)"]],
    ["en", { ocr: ocr({ recognized: 0 }) }, ["no page could be recognized"]],
    ["en", { ocr: ocr({ stop: { reason: "page_limit", page: 11, limit: 10 } }) }, ["11 pages recognized (5,400 characters)", "recognition stopped at page 11: at most 10 pages are recognized per file"]],
    ["ru", { ocr: ocr({ stop: { reason: "page_limit", page: 2, limit: 1 } }) }, ["распознано 11 страниц (5\u00a0400 символов)", "распознавание остановлено на странице 2: за один файл распознаётся не больше 1 страницы"]],
    ["en", { ocr: ocr({ stop: { reason: "time_limit", page: 57, limit: 1800 } }) }, ["11 pages recognized (5,400 characters)", "recognition stopped at page 57: the 1,800 s allowed for recognizing one file ran out"]],
    ["ru", { ocr: ocr({ stop: { reason: "render_budget", page: 4, limit: 60 } }) }, ["распознано 11 страниц (5\u00a0400 символов)", "распознавание остановлено на странице 4: она рисовалась дольше 60 с"]],
    ["en", { ocr: ocr({ overBudget: [3, 9] }) }, ["11 pages recognized (5,400 characters)", "not recognized, took longer than 60 s: pages 3, 9"]],
    ["ru", { ocr: ocr({ failed: [7] }) }, ["распознано 11 страниц (5\u00a0400 символов)", "распознавание не удалось: страница 7"]],
    ["en", { ocrUnavailable: true }, ["text recognition is not available on this server right now"]],
    ["en", { ocr: ocr(), searchableSkipped: "every page already has a text layer" }, ["11 pages recognized (5,400 characters)", "no searchable PDF: every page already has a text layer"]],
    ["ru", { ocr: ocr(), searchableSkipped: "source is 9 bytes, over the 1-byte upload limit" }, ["распознано 11 страниц (5\u00a0400 символов)", "PDF с текстовым слоем из этого файла сделать не удалось (текст — в файле .txt)"]],
  ] as const)("%s %j", (locale, extra, expected) => {
    expect(ocrSummary(locale, facts(extra))).toEqual(expected);
  });
});
