import { Hono } from "hono";

/** What `/ready` says: 200 when `ready`, else 503; `text` tells why, or what to watch (chains behind). */
export type Readiness = { ready: boolean; text: string };

/**
 * Ready once every chain served is backfilled and held by the store whose chains' `states` these
 * are. Chains indexed `apart` each go live on their own: ready once any is, the text naming those
 * still syncing.
 */
export function backfilledReadiness(
  chains: readonly { id: number }[],
  states: ReadonlyMap<number, { ready: boolean }>,
  apart = false,
): Readiness {
  const syncing = chains.filter((chain) => states.get(chain.id)?.ready !== true);
  if (syncing.length === 0) return { ready: true, text: "" };
  if (!apart || syncing.length === chains.length) return { ready: false, text: "not every chain is backfilled yet" };
  return { ready: true, text: syncing.map((chain) => `chain ${chain.id} is syncing`).join("\n") };
}

/** What `readiness` says, or not ready when it fails: the operator's log says why, the answer nothing. */
export const readinessOrLogged = (readiness: () => Promise<Readiness>): Promise<Readiness> =>
  readiness().catch((error: Error) => {
    console.error(`/ready: ${error.message}`);
    return { ready: false, text: "cannot tell now (the reason is logged)" };
  });

/**
 * `/health` (the process answers) and `/ready`, for load balancers and orchestrators, where the API
 * runs outside Ponder (which serves its own inside `npm start`).
 */
export function probes(readiness: () => Promise<Readiness>): Hono {
  return new Hono()
    .get("/health", (c) => c.text(""))
    .get("/ready", async (c) => {
      const { ready, text } = await readinessOrLogged(readiness);
      return c.text(text, ready ? 200 : 503);
    });
}
