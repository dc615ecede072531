/**
 * Vitest's global setup: on PGlite, one template directory for every service of the run
 * (devkit/pglite-template.ts), made before the first file and removed after the last. Each
 * file's own, made in its worker, cost every integration file 5–12 s, and a worker that vitest
 * ended left its copy in the temporary directory.
 */
import { makePgliteTemplate, TEMPLATE_VARIABLE } from "../../devkit/pglite-template";

export default async function setup(): Promise<(() => void) | undefined> {
  // Each project of vitest.config.ts runs the global setup, all in this one process: the first makes it.
  if (process.env.DATABASE_URL || process.env[TEMPLATE_VARIABLE]) return undefined;
  const { data, remove } = await makePgliteTemplate();
  // The workers start after this, with this process's environment.
  process.env[TEMPLATE_VARIABLE] = data;
  return () => {
    delete process.env[TEMPLATE_VARIABLE];
    remove();
  };
}
