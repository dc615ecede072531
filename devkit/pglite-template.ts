import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";

/**
 * A PGlite database directory made once, copied for each service the tests start on PGlite.
 * Making one (PGlite's initdb, in WASM) takes 5–12 s on a 2-core machine, twice per `npm start`
 * (Ponder's directory and the keys' beside it); a copy takes milliseconds. Ponder and the keys'
 * store then open a database with no tables, as in a fresh one; test/fresh-clone.test.ts still
 * starts from nothing, as a user does.
 *
 * `npm test` makes it once for the whole run (test/setup/pglite-template.ts) and names it in
 * TEMPLATE_VARIABLE; any other process (the bench) makes its own the first time it needs one.
 */
export const TEMPLATE_VARIABLE = "PGLITE_TEMPLATE_DIR";

/** Makes a template directory; `remove` deletes it. */
export async function makePgliteTemplate(): Promise<{ data: string; remove(): void }> {
  const dir = mkdtempSync(join(tmpdir(), "pglite-template-"));
  const data = join(dir, "data");
  await (await PGlite.create(data)).close();
  return { data, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

let own: Promise<string> | undefined;

function template(): Promise<string> {
  const named = process.env[TEMPLATE_VARIABLE];
  if (named) return Promise.resolve(named);
  own ??= makePgliteTemplate().then(({ data, remove }) => {
    process.once("exit", remove);
    return data;
  });
  return own;
}

/** A new PGlite database directory at `path` (which must not exist), as PGlite would make it. */
export async function freshPgliteDir(path: string): Promise<void> {
  cpSync(await template(), path, { recursive: true, errorOnExist: true, force: false });
}
