/** Sizes in chat text are numbers formatted by the chat's locale (decimal comma in Russian). */
import { expect, test } from "vitest";
import { t } from "../../bot/i18n/index.ts";
import { mb, sizeParts } from "../../bot/intake/format.ts";
import { reasonText } from "../../bot/status/texts.ts";

const MiB = 1024 * 1024;

test("mb rounds to one decimal under 10 MB, whole MB above, never 0 for a non-empty file", () => {
  expect([mb(0), mb(1), mb(0.34 * MiB), mb(3.3 * MiB), mb(9.96 * MiB), mb(25 * MiB + 1), mb(4096 * MiB)]).toEqual([0, 0.1, 0.3, 3.3, 10, 25, 4096]);
});

test("sizeParts: KB (rounded up, at least 1) under 1 MB, MB from 1 MB", () => {
  expect(sizeParts(0)).toEqual({ key: "size-kb", n: 0 }); // a declared size of 0 is not "1 KB"
  expect(sizeParts(1)).toEqual({ key: "size-kb", n: 1 });
  expect(sizeParts(59 * 1024 + 1)).toEqual({ key: "size-kb", n: 60 });
  expect(sizeParts(MiB)).toEqual({ key: "size-mb", n: 1 });
});

test("a size in a reason reads '3,3 МБ' in Russian and '3.3 MB' in English", () => {
  const params = { size_bytes: Math.round(3.3 * MiB), limit_bytes: 50 * MiB };
  expect(reasonText("ru", "result_too_big", params)).toBe("Результат весит 3,3 МБ — больше лимита отправки (50 МБ). Для PDF разделите или сожмите его кнопками под результатом или пришлите меньше страниц.");
  expect(reasonText("en", "result_too_big", params)).toContain("3.3 MB");
});

test("the intake refusal prints declared size and limit by locale", () => {
  const vars = { id: "7", size: mb(20.5 * MiB), limit: mb(20 * MiB) };
  expect(t("ru", "intake-too-big", vars)).toBe("Файл 21 МБ больше лимита скачивания этого бота (20 МБ). Задача № 7 не будет выполнена.");
  const small = { id: "8", size: mb(2.5 * MiB), limit: mb(2 * MiB) };
  expect(t("ru", "intake-too-big", small)).toContain("Файл 2,5 МБ больше лимита скачивания этого бота (2 МБ)");
  expect(t("en", "intake-too-big", small)).toContain("2.5 MB");
});
