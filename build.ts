// Compiles the one self-contained executable for this platform: dist/cairn.
// The migrations are imported as text, so they are inside the binary.
import { mkdirSync } from "node:fs";

mkdirSync("dist", { recursive: true });
const result = await Bun.build({
  entrypoints: ["./src/main.ts"],
  compile: { outfile: "./dist/cairn" },
  minify: true,
  target: "bun",
});
if (!result.success) {
  for (const message of result.logs) console.error(message);
  process.exit(1);
}
console.log("built dist/cairn");
