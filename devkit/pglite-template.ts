import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";

/**
 * A PGlite database directory made once per process, copied for each service the tests start on
 * PGlite. Making one (PGlite's initdb, in WASM) takes 5–12 s on a 2-core machine, twice per
 * `npm start` (Ponder's directory and the keys' beside it); a copy takes milliseconds. Ponder and the
 * keys' store then open a database with no tables, as in a fresh one; test/fresh-clone.test.ts
 * still starts from nothing, as a user does.
 */
let template: Promise<string> | undefined;

function made(): Promise<string> {
  template ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), "pglite-template-"));
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
    const data = join(dir, "data");
    await (await PGlite.create(data)).close();
    return data;
  })();
  return template;
}

/** A new PGlite database directory at `path` (which must not exist), as PGlite would make it. */
export async function freshPgliteDir(path: string): Promise<void> {
  cpSync(await made(), path, { recursive: true, errorOnExist: true, force: false });
}
