import { defineConfig } from "drizzle-kit";

/** drizzle-kit for the PostgreSQL store: `bun run db:generate:pg` writes SQL migrations from bot/db/pg-schema.ts. */
export default defineConfig({
  dialect: "postgresql",
  schema: "./bot/db/pg-schema.ts",
  out: "./bot/db/pg-migrations",
});
