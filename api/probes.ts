import { Hono } from "hono";

/**
 * `/health` (the process answers) and `/ready` (200 once `ready` holds), for load balancers and
 * orchestrators, where the API runs outside Ponder (which serves its own inside `npm start`).
 */
export function probes(ready: () => Promise<boolean>, notReady: string): Hono {
  return new Hono()
    .get("/health", (c) => c.text(""))
    .get("/ready", async (c) => ((await ready().catch(() => false)) ? c.text("") : c.text(notReady, 503)));
}
