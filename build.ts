// Compiles the one self-contained executable for this platform: dist/cairn.
// The migrations are imported as text, so they are inside the binary.
import { mkdirSync } from "node:fs";
import { buildCommit, compile } from "./build-common.ts";

mkdirSync("dist", { recursive: true });
await compile({ outfile: "./dist/cairn", commit: buildCommit() });
console.log("built dist/cairn");
