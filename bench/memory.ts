/**
 * `npx tsx bench/memory.ts [--smoke]` (DATABASE_URL; SEED as the bench takes it): only the bench's
 * memory figures, in a few minutes rather than the whole bench's half hour. It seeds the small and
 * the large database as `npm run bench` does, starts a fresh `npm run serve` over each, has it
 * answer a sample of every check route, and prints the process tree's RSS and the bytes per
 * delegation.
 */

import { settle } from "./measure";
import { parseOptions } from "./options";
import { treeMemory } from "./procs";
import { checkRoutes } from "./routes";
import { runBenchScript } from "./script";
import { seededStack, startServe } from "./stack";
import { verifyRoute } from "./verify";

const o = parseOptions();
await runBenchScript("bench/memory.ts", async ({ db, cleanup, log }) => {
  const { service, data, grow } = await seededStack(o, cleanup, db, log);
  for (const step of ["small", "large"] as const) {
    const size = await grow(step);
    const delegations = size.v2 + size.v1;
    await cleanup.scope(async () => {
      const tag = `memory-${process.pid}-${step}`;
      const serve = await startServe(cleanup, service, tag);
      await settle(serve.url, service.headers);
      const json = { ...service.headers, "Content-Type": "application/json" };
      for (const route of checkRoutes(data, o.seed)) await verifyRoute(serve.url, route, o.verifySample, json);
      const m = treeMemory(tag);
      const bytes = Math.round((m.rssMb * 2 ** 20) / delegations).toLocaleString("en");
      log(
        `npm run serve over ${delegations.toLocaleString("en")} delegations: RSS ${Math.round(m.rssMb)} MB ` +
          `(${m.processes} processes, peak ${Math.round(m.peakMb)} MB), ${bytes} bytes per delegation`,
      );
    });
  }
});
