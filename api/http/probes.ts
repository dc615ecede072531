import { Hono } from "hono";

/** What `/ready` says: 200 when `ready`, else 503; `text` tells why, or what to watch (chains behind). */
export type Readiness = { ready: boolean; text: string };

/**
 * `/health` (the process answers) and `/ready`, for load balancers and orchestrators, where the API
 * runs outside Ponder (which serves its own inside `npm start`).
 */
export function probes(readiness: () => Promise<Readiness>): Hono {
  return new Hono()
    .get("/health", (c) => c.text(""))
    .get("/ready", async (c) => {
      const { ready, text } = await readiness().catch((error: Error) => {
        // The operator's log may say why; an answer to anyone who asks says nothing of the database.
        console.error(`/ready: ${error.message}`);
        return { ready: false, text: "cannot tell now (the reason is logged)" };
      });
      return c.text(text, ready ? 200 : 503);
    });
}
