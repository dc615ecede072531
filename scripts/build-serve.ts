/**
 * `npm run serve` runs the API as JavaScript bundled here, not through tsx: tsx's loader and its
 * compiled-module caches cost each process ~150 MB, and a replica runs one process per core
 * (docs/performance.md). Our modules are bundled into `.build/serve/`, packages stay imports of
 * node_modules, and the worker's part is a chunk of its own that the primary never loads.
 *
 * Several replicas may start at once from one checkout: every file is written whole under another
 * name and renamed into place, and the same sources give the same files, so a starting replica
 * never reads half a file.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { build } from "esbuild";

const ROOT = resolve(import.meta.dirname, "..");

const OUT = join(ROOT, ".build", "serve");

const { outputFiles } = await build({
  entryPoints: [join(ROOT, "scripts/serve.ts")],
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  packages: "external",
  outdir: OUT,
  write: false,
  logLevel: "warning",
});
// api/routes/portal.ts reads its page beside itself (import.meta.url): beside the chunk that holds it.
const files = [
  ...outputFiles.map((f) => ({ path: f.path, contents: f.contents })),
  { path: join(OUT, "portal.html"), contents: readFileSync(join(ROOT, "api/routes/portal.html")) },
];
for (const { path, contents } of files) {
  mkdirSync(dirname(path), { recursive: true });
  const partial = `${path}.${process.pid}.partial`;
  writeFileSync(partial, contents);
  renameSync(partial, path);
}
