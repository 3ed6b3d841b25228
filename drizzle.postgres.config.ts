import { defineConfig } from "drizzle-kit";

// The PostgreSQL engine's migrations (`bunx drizzle-kit generate --config drizzle.postgres.config.ts`).
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/store/postgres/schema.ts",
  out: "./drizzle/postgres",
});
