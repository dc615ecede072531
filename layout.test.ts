/**
 * The layout's one-way dependencies (README, Layout), read from every TypeScript file's imports:
 * pure rules at the bottom (core/), indexer (src/) and API (api/) on them, launcher, demo, devkit
 * and bench on top, tests on top of everything; the typed client (client/) stands alone.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = import.meta.dirname;
const SKIP = new Set(["node_modules", ".git", ".ponder", "generated"]);

function* files(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* files(path);
    else if (/\.(ts|mts|cts)$/.test(entry.name)) yield relative(ROOT, path);
  }
}

/** Each file's imports: the specifiers, and the repository paths of the relative ones. */
const imports = [...files(ROOT)].map((file) => {
  const text = readFileSync(join(ROOT, file), "utf8");
  const specifiers = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s+["']([^"']+)["']/g)].map(
    (m) => m[1]!,
  );
  const local = specifiers.filter((s) => s.startsWith(".")).map((s) => relative(ROOT, resolve(ROOT, file, "..", s)));
  return { file, specifiers, local };
});

const under = (path: string, folder: string) => path === folder || path.startsWith(`${folder}/`);
const offending = (from: (file: string) => boolean, to: (target: string) => boolean) =>
  imports.flatMap(({ file, local }) => (from(file) ? local.filter(to).map((target) => `${file} → ${target}`) : []));

describe("the layout", () => {
  it("reads the imports of the whole tree", () => {
    expect(imports.length).toBeGreaterThan(100);
    expect(imports.find((i) => i.file === "api/app.ts")?.local).toContain("api/access/middleware");
  });

  it("nothing outside test/ imports from test/", () => {
    expect(
      offending(
        (f) => !under(f, "test"),
        (t) => under(t, "test"),
      ),
    ).toEqual([]);
  });

  it("core/ imports only core/ and no node: network, file or process module", () => {
    expect(
      offending(
        (f) => under(f, "core"),
        (t) => !under(t, "core"),
      ),
    ).toEqual([]);
    const io = /^node:(fs|fs\/promises|net|http|https|http2|dgram|dns|tls|child_process|cluster|worker_threads)$/;
    const found = imports.flatMap(({ file, specifiers }) =>
      under(file, "core") ? specifiers.filter((s) => io.test(s) || /^(fs|net|http|child_process)$/.test(s)) : [],
    );
    expect(found).toEqual([]);
  });

  it("the indexing functions do not import the API: only src/api/index.ts mounts it", () => {
    expect(
      offending(
        (f) => under(f, "src") && f !== "src/api/index.ts",
        (t) => under(t, "api"),
      ),
    ).toEqual([]);
  });

  it("the API imports neither the indexer, the launcher, the demo, the devkit nor the bench", () => {
    const above = (t: string) => ["src", "scripts", "devkit", "bench"].some((folder) => under(t, folder));
    expect(offending((f) => under(f, "api"), above)).toEqual([]);
  });

  it("no line is longer than 120 characters (but in the client's generated types)", () => {
    const long = imports.flatMap(({ file }) =>
      file === "client/openapi.ts"
        ? []
        : readFileSync(join(ROOT, file), "utf8")
            .split("\n")
            .flatMap((line, i) => (line.length > 120 ? [`${file}:${i + 1} (${line.length})`] : [])),
    );
    expect(long).toEqual([]);
  });

  it("the client imports only its own files: it is for the service's users, apart from the service", () => {
    expect(
      offending(
        (f) => under(f, "client"),
        (t) => !under(t, "client"),
      ),
    ).toEqual([]);
  });

  it("the client's package.json names exactly the packages its files import, at the versions installed", () => {
    const manifest = (path: string) =>
      JSON.parse(readFileSync(join(ROOT, path), "utf8")) as { dependencies: Record<string, string> };
    const own = manifest("client/package.json").dependencies;
    const root = manifest("package.json").dependencies;
    const imported = imports
      .filter(({ file }) => under(file, "client") && !file.endsWith(".test.ts"))
      .flatMap(({ specifiers }) => specifiers.filter((s) => !s.startsWith(".") && !s.startsWith("node:")));
    expect(new Set(imported)).toEqual(new Set(Object.keys(own)));
    for (const [name, version] of Object.entries(own)) expect(version, name).toBe(root[name]);
  });

  it("devkit/ imports neither the launcher, the demo nor the bench", () => {
    expect(
      offending(
        (f) => under(f, "devkit"),
        (t) => under(t, "scripts") || under(t, "bench"),
      ),
    ).toEqual([]);
  });
});
