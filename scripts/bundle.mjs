/**
 * `node scripts/bundle.mjs <serve|start> [--run]`: bundles scripts/<name>.ts and our modules it
 * imports into `.build/<name>/` for plain node (packages stay imports of node_modules); with
 * `--run`, then runs it in this process. JavaScript, so that node runs it without tsx: tsx's
 * loader took a replica ~150 MB, and `npm start`'s launcher about 2 s of CPU to load its hundred
 * modules (docs/architecture.md). Built and run in one process, which the npm scripts `exec`: npm
 * passes SIGTERM to its own child alone, and a shell between them would leave the service running
 * (test/shutdown.test.ts).
 *
 * Several services may start at once from one checkout: every file is written whole under another
 * name and renamed into place, and the same sources give the same files, so a starting process
 * never reads half a file.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";

const ROOT = resolve(import.meta.dirname, "..");
const ENTRIES = ["serve", "start"];

const [name, run] = process.argv.slice(2, 4);
if (!ENTRIES.includes(name ?? "") || (run !== undefined && run !== "--run")) {
  console.error(`use: node scripts/bundle.mjs <${ENTRIES.join("|")}> [--run [its arguments]]`);
  process.exit(1);
}
const out = join(ROOT, ".build", name);
const { outputFiles } = await build({
  entryPoints: [join(ROOT, `scripts/${name}.ts`)],
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  packages: "external",
  outdir: out,
  write: false,
  logLevel: "warning",
});
// api/routes/portal.ts reads its page beside itself (import.meta.url): beside the chunk that holds it.
const files = [
  ...outputFiles.map((f) => ({ path: f.path, contents: f.contents })),
  { path: join(out, "portal.html"), contents: readFileSync(join(ROOT, "api/routes/portal.html")) },
];
for (const { path, contents } of files) {
  mkdirSync(dirname(path), { recursive: true });
  const partial = `${path}.${process.pid}.partial`;
  writeFileSync(partial, contents);
  renameSync(partial, path);
}
if (run) {
  // The bundle reads its arguments (`npm start -- --port 1`) where the script would have: after its path.
  const bundle = join(out, `${name}.js`);
  process.argv.splice(1, 3, bundle);
  await import(pathToFileURL(bundle).href);
}
