/**
 * The layout's one-way dependencies (docs/architecture.md), read from every TypeScript file's
 * imports, static and dynamic: pure rules (core/) and Ponder's internals (ponder/) at the bottom,
 * indexer (src/) and API (api/) on them, launcher, demo, devkit and bench on top, tests on top of
 * everything; the typed client (client/) stands alone. No source file takes part in an import cycle.
 * And the repository stands alone: nothing in it points at an issue or at a file outside it. Lines
 * stay within 120 characters, and functions within `LONGEST_FUNCTION` lines (tests aside).
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { UNIT_DATABASE } from "./vitest.config";

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

/** Every file of the repository: git's list (tracked, and new ones not ignored), or the tree without git. */
function repositoryFiles(): string[] {
  const walk = function* (dir: string): Generator<string> {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (SKIP.has(entry.name) || entry.name === ".build") continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) yield* walk(path);
      else yield relative(ROOT, path);
    }
  };
  try {
    const listed = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
      cwd: ROOT,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    return listed.split("\0").filter((file) => file !== "" && existsSync(join(ROOT, file)));
  } catch {
    return [...walk(ROOT)];
  }
}

/**
 * What in `file`'s text points outside the repository, each as `line: text`: an issue's number (a
 * reader of the repository cannot open it: say the reason instead), a `../` path that climbs out of
 * the repository, an absolute path of someone's machine, a Markdown file the repository does not
 * hold (`held`: its files). Not a hash (`ERC1155 #7`, `#555`) nor a URL's path (`/v2/../x`).
 */
function outsideReferences(file: string, text: string, held: ReadonlySet<string>): string[] {
  const found: { at: number; what: string }[] = [];
  for (const m of text.matchAll(/\bissues?\b[\s*/#]*\d+/gi)) found.push({ at: m.index, what: m[0] });
  for (const m of text.matchAll(/(?<![\w/.])(?:\.\.\/)+[\w.-]*/g)) {
    if (relative(ROOT, resolve(ROOT, dirname(file), m[0])).startsWith("..")) found.push({ at: m.index, what: m[0] });
  }
  for (const m of text.matchAll(/(?<![\w.~-])\/(?:work|home|Users|mnt)\/[\w./-]*/g))
    found.push({ at: m.index, what: m[0] });
  for (const m of text.matchAll(/(?<![\w./-])[\w./-]*\.md\b/g)) {
    const name = m[0].replace(/^\.\//, "");
    const inside = relative(ROOT, resolve(ROOT, dirname(file), name));
    const known = held.has(name) || held.has(inside) || [...held].some((f) => f.endsWith(`/${name}`));
    if (!known) found.push({ at: m.index, what: m[0] });
  }
  const lineOf = (at: number) => text.slice(0, at).split("\n").length;
  const first = found.sort((a, b) => a.at - b.at).filter((hit, i, all) => i === 0 || all[i - 1]!.at !== hit.at);
  return first.map(({ at, what }) => `${lineOf(at)}: ${what.replace(/\s+/g, " ")}`);
}

/** The most lines a function may take (tests aside): a longer one is several to name and to read apart. */
const LONGEST_FUNCTION = 120;
const FUNCTION_KINDS = new Set([
  ts.SyntaxKind.FunctionDeclaration,
  ts.SyntaxKind.MethodDeclaration,
  ts.SyntaxKind.ArrowFunction,
  ts.SyntaxKind.FunctionExpression,
  ts.SyntaxKind.Constructor,
  ts.SyntaxKind.GetAccessor,
  ts.SyntaxKind.SetAccessor,
]);

/** The functions in `file`'s text longer than `LONGEST_FUNCTION` lines, each as `file:line (lines)`. */
function longFunctions(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest);
  const lineOf = (at: number) => source.getLineAndCharacterOfPosition(at).line + 1;
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (FUNCTION_KINDS.has(node.kind)) {
      const [start, end] = [lineOf(node.getStart(source)), lineOf(node.getEnd())];
      if (end - start + 1 > LONGEST_FUNCTION) found.push(`${file}:${start} (${end - start + 1})`);
    }
    node.forEachChild(visit);
  };
  visit(source);
  return found;
}

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

  // Parsing every file takes 2 s alone, longer beside the integration tests: a minute's timeout.
  it(`no function is longer than ${LONGEST_FUNCTION} lines (tests aside)`, () => {
    // A function of `lines` lines: its first line, its body, its closing brace.
    const body = (lines: number) => Array.from({ length: lines - 2 }, (_, i) => `  x(${i});`).join("\n");
    // Counted from the function itself, not its comment.
    expect(longFunctions("a.ts", `/** Fits. */\nfunction fits() {\n${body(LONGEST_FUNCTION)}\n}`)).toEqual([]);
    const getter = `class C {\n  get over() {\n${body(LONGEST_FUNCTION + 1)}\n  }\n}`;
    expect(longFunctions("a.ts", getter)).toEqual([`a.ts:2 (${LONGEST_FUNCTION + 1})`]);
    const arrow = `const f = () => {\n${body(LONGEST_FUNCTION + 2)}\n};`;
    expect(longFunctions("a.ts", arrow)).toEqual([`a.ts:1 (${LONGEST_FUNCTION + 2})`]);
    const sources = imports.filter(({ file }) => !file.endsWith(".test.ts") && !under(file, "test"));
    expect(sources.flatMap(({ file, text }) => longFunctions(file, text))).toEqual([]);
  }, 60_000);

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

  it("the unit tests that read DATABASE_URL, or import what does, are the unit-database project's", () => {
    // .ci/run's Postgres pass runs only these of the unit tests: one left out would never meet Postgres.
    const readsDatabaseUrl = (text: string) => /\benv\.DATABASE_URL\b/.test(text);
    const readers = new Set(
      imports.filter((i) => !i.file.endsWith(".test.ts") && readsDatabaseUrl(i.text)).map((i) => i.file),
    );
    expect(readers.size).toBeGreaterThan(0);
    const unitTests = imports.filter((i) => i.file.endsWith(".test.ts") && !/^test\/[^/]+$/.test(i.file));
    const opening = unitTests.filter(
      (i) => readsDatabaseUrl(i.text) || i.local.some((target) => readers.has(fileOf(target) ?? "")),
    );
    expect(opening.map((i) => i.file).sort()).toEqual([...UNIT_DATABASE].sort());
  });

  it("devkit/ imports neither the launcher, the demo nor the bench", () => {
    expect(
      offending(
        (f) => under(f, "devkit"),
        (t) => under(t, "scripts") || under(t, "bench"),
      ),
    ).toEqual([]);
  });

  it("nothing points outside the repository: no issue numbers, no paths out of it", () => {
    const held = new Set(["README.md", "docs/api.md", "docs/contract.md", "devkit/oracle.ts"]);
    // The samples are built from parts, so that this file itself names no issue and no path out.
    const [issue, up, sibling] = ["iss" + "ue", "." + "./", "sib" + "ling"];
    const sample = [
      `as ${issue} 14 asks; ${issue}s 6, 7 and 16; I${issue.slice(1)}`,
      ` * 30's targets; see github.com/o/r/${issue}s/12`,
      `new URL("${up}${up}${sibling}/tools/install.mjs", import.meta.url); from "../core/chains"`,
      `/ho${"me"}/alex/${sibling}/notes/road${"map"}.md; docs/api.md, ${up}README.md, contract.md`,
      "/usr/bin/chromium, https://example.com/home/x, /registry/v2/../../etc, ERC1155 #7, color: #555;",
      "keys no one issued; the issues' targets",
    ].join("\n");
    expect(outsideReferences("devkit/oracle.ts", sample, held)).toEqual([
      `1: ${issue} 14`,
      `1: ${issue}s 6`,
      `1: I${issue.slice(1)} * 30`,
      `2: ${issue}s/12`,
      `3: ${up}${up}${sibling}`,
      `4: /ho${"me"}/alex/${sibling}/notes/road${"map"}.md`,
    ]);
    const readme = `[API](docs/api.md) · road${"map"}.md · ${up}${sibling} beside the repository`;
    expect(outsideReferences("README.md", readme, held)).toEqual([`1: road${"map"}.md`, `1: ${up}${sibling}`]);

    const files = repositoryFiles();
    expect(files).toContain("docs/api.md");
    const inRepository = new Set(files);
    const found = files
      .filter((file) => file !== "layout.test.ts" && file !== "package-lock.json")
      .flatMap((file) =>
        outsideReferences(file, readFileSync(join(ROOT, file), "utf8"), inRepository).map((hit) => `${file}:${hit}`),
      );
    expect(found).toEqual([]);
  });
});
