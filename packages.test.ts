/**
 * What `npm install` puts in node_modules, read from the lockfile: every package runs on the oldest
 * Node package.json's `engines` admits (else npm warns on each install, and the package may call what
 * that Node lacks), and every package with an install script is approved or refused by name in
 * `allowScripts` (npm 11 runs none it is not told of, and warns of each). The README names that Node.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import semver from "semver";
import { describe, expect, it } from "vitest";

const ROOT = import.meta.dirname;

type Locked = { version?: string; engines?: { node?: string }; hasInstallScript?: boolean };
type Manifest = { engines: { node: string }; allowScripts: Record<string, boolean> };

const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as Manifest;
const locked = (
  JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as { packages: Record<string, Locked> }
).packages;

/** A package's name from its lockfile path (`node_modules/a/node_modules/@b/c` → `@b/c`). */
const nameOf = (path: string) => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length);

/** The packages of `packages` that would not run on Node `oldest`, each with the range it asks. */
function tooNew(packages: Record<string, Locked>, oldest: string): string[] {
  return Object.entries(packages).flatMap(([path, entry]) => {
    const range = entry.engines?.node;
    return path !== "" && range !== undefined && !semver.satisfies(oldest, range)
      ? [`${nameOf(path)}@${entry.version}: node ${range}`]
      : [];
  });
}

/** The packages of `packages` with an install script that `allowScripts` names neither way. */
const unruled = (packages: Record<string, Locked>, allow: Record<string, boolean>) =>
  Object.entries(packages)
    .filter(([path, entry]) => entry.hasInstallScript && path !== "" && !(nameOf(path) in allow))
    .map(([path]) => nameOf(path));

describe("the packages npm installs", () => {
  const oldest = semver.minVersion(manifest.engines.node)?.version ?? "";

  it("each runs on the oldest Node package.json's engines admit", () => {
    expect(semver.valid(oldest), manifest.engines.node).not.toBeNull();
    // The rule first, on a dependency that asks for a newer Node than ours.
    const newer = { "node_modules/a/node_modules/@b/c": { version: "2.0.0", engines: { node: ">=99.0.0" } } };
    expect(tooNew({ ...locked, ...newer }, oldest)).toEqual(["@b/c@2.0.0: node >=99.0.0"]);
    expect(tooNew(locked, oldest)).toEqual([]);
  });

  it("each with an install script is approved or refused in allowScripts", () => {
    const scripted = { "node_modules/x/node_modules/new-postinstall": { version: "1.0.0", hasInstallScript: true } };
    expect(unruled({ ...locked, ...scripted }, manifest.allowScripts)).toEqual(["new-postinstall"]);
    expect(unruled(locked, manifest.allowScripts)).toEqual([]);
  });

  it("the README names that oldest Node", () => {
    const named = /Node\.js (\d+\.\d+) or later/.exec(readFileSync(join(ROOT, "README.md"), "utf8"))?.[1];
    expect(named).toBe(`${semver.major(oldest)}.${semver.minor(oldest)}`);
  });
});
