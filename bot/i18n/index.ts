/**
 * Chat-facing text through @grammyjs/i18n (Fluent files in `bot/locales/<lang>/*.ftl`).
 * Russian is the default; users whose `language_code` starts with `en` get English.
 */
import { I18n, type I18nFlavor } from "@grammyjs/i18n";
import type { Context } from "grammy";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Locales shipped with docket. */
export const LOCALES = ["ru", "en"] as const;
/** One of {@link LOCALES}. */
export type Locale = (typeof LOCALES)[number];

/** Map a Telegram `language_code` (e.g. `en-US`, `ru`, `de`, undefined) to a shipped locale. */
export function localeFor(languageCode: string | null | undefined): Locale {
  return languageCode?.toLowerCase().startsWith("en") ? "en" : "ru";
}

/** grammY context with i18n. */
export type DocketContext = Context & I18nFlavor;

/** The bot's i18n instance: middleware for handlers, `t(locale, key, vars)` for workers. */
export const i18n = new I18n<DocketContext>({
  defaultLocale: "ru",
  directory: join(dirname(fileURLToPath(import.meta.url)), "..", "locales"),
  useSession: false,
  localeNegotiator: (ctx) => localeFor(ctx.from?.language_code),
  fluentBundleOptions: { useIsolating: false },
});

/** Whether `key` exists in the locale's messages (no warning is logged for a miss). */
export function hasMessage(locale: Locale, key: string): boolean {
  const fluent = i18n.fluent as unknown as { bundles: Iterable<{ locales: string[]; hasMessage(id: string): boolean }> };
  for (const b of fluent.bundles) if (b.locales.includes(locale) && b.hasMessage(key)) return true;
  return false;
}

/** Translate outside a handler (workers, janitor). Vars are numbers or strings. */
export function t(locale: Locale, key: string, vars?: Record<string, string | number>): string {
  return i18n.t(locale, key, vars);
}
