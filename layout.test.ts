/**
 * The layout's one-way dependencies (docs/architecture.md), read from every TypeScript file's
 * imports, static and dynamic: pure rules (core/) and Ponder's internals (ponder/) at the bottom,
 * indexer (src/) and API (api/) on them, launcher, demo, devkit and bench on top, tests on top of
 * everything; the typed client (client/) stands alone. No source file takes part in an import cycle.
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

const STATEMENT = /(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s+["']([^"']+)["']/g;
const SIDE_EFFECT = /(?:^|\n)\s*import\s+["']([^"']+)["']/g;
const DYNAMIC = /\bimport\(\s*["']([^"']+)["']\s*\)/g;

/** What a file's text imports: static, side-effect and dynamic `import()` specifiers. */
const specifiersOf = (text: string) =>
  [STATEMENT, SIDE_EFFECT, DYNAMIC].flatMap((pattern) => [...text.matchAll(pattern)].map((m) => m[1]!));

/** Each file's imports: the specifiers, and the repository paths of the relative ones. */
const imports = [...files(ROOT)].map((file) => {
  const text = readFileSync(join(ROOT, file), "utf8");
  const specifiers = specifiersOf(text);
  const local = specifiers.filter((s) => s.startsWith(".")).map((s) => relative(ROOT, resolve(ROOT, file, "..", s)));
  return { file, text, specifiers, local };
});

/** The file an import names: a path as written, or with `.ts` or `/index.ts`. */
const known = new Set(imports.map((i) => i.file));
const fileOf = (target: string) => [target, `${target}.ts`, `${target}/index.ts`].find((f) => known.has(f));

/** The import cycles of a graph (file → the files it imports): each as its files, sorted (Tarjan's SCCs). */
function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (stack.includes(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component = stack.splice(stack.indexOf(node));
    if (component.length > 1 || graph.get(node)?.includes(node)) cycles.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return cycles;
}

/** Where a text names one of Ponder's own tables, its sync cache's schema or one of its metrics. */
const ponderNames = (text: string) => [...text.matchAll(/\b_?ponder_[a-z]\w*/g)].map((m) => m[0]);

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

  it("finds the imports of every kind: static, re-exports, side effects and dynamic import()", () => {
    const text = `import { a } from "./a";\nexport * from "./b";\nimport "./c";\nconst d = await import("./d");`;
    expect(specifiersOf(text)).toEqual(["./a", "./b", "./c", "./d"]);
  });

  it("no source file takes part in an import cycle (tests aside)", () => {
    // The finder itself: a graph with a cycle of three and a self-import, beside a chain without one.
    const sample = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", ["a", "d"]],
      ["d", []],
      ["e", ["e"]],
    ]);
    expect(cyclesOf(sample)).toEqual([["a", "b", "c"], ["e"]]);
    const sources = imports.filter(({ file }) => !file.endsWith(".test.ts") && !under(file, "test"));
    const graph = new Map(
      sources.map(({ file, local }) => [
        file,
        local.flatMap((t) => fileOf(t) ?? []).filter((t) => !t.endsWith(".test.ts")),
      ]),
    );
    expect(cyclesOf(graph)).toEqual([]);
  });

  it("only ponder/ names Ponder's own tables, its sync cache and its metrics (_ponder_*, ponder_*)", () => {
    expect(ponderNames("FROM ponder_sync.logs, _ponder_checkpoint; ponder_sync_is_realtime; ponder.config")).toEqual([
      "ponder_sync",
      "_ponder_checkpoint",
      "ponder_sync_is_realtime",
    ]);
    const named = imports.flatMap(({ file, text }) =>
      under(file, "ponder") || file === "layout.test.ts" ? [] : ponderNames(text).map((name) => `${file}: ${name}`),
    );
    expect(named).toEqual([]);
  });

  it("ponder/ imports only core/ of this repository (its test checks the API's use of it): all may build on it", () => {
    expect(
      offending(
        (f) => under(f, "ponder") && !f.endsWith(".test.ts"),
        (t) => !under(t, "ponder") && !under(t, "core") && t !== "package.json",
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
