import { defineConfig } from "drizzle-kit";

/** drizzle-kit: `bun run db:generate` writes SQL migrations from bot/db/schema.ts. */
export default defineConfig({
  dialect: "sqlite",
  schema: "./bot/db/schema.ts",
  out: "./bot/db/migrations",
});
