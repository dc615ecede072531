import { getRequestListener } from "@hono/node-server";
import { Hono } from "hono";
import { openAccess } from "../../api/access/open";
import { createApp } from "../../api/app";
import { probes } from "../../api/http/probes";
import { startHttpServer } from "../../api/http/server";
import type { ServedChain } from "../../api/store/served-chains";
import { NOTHING_INDEXED } from "../../api/store/store";
import { NO_ALARMS } from "../../api/watch/chain-alarms";
import type { ApiSettings } from "../../core/settings";

export type WaitingRoom = { close(): Promise<void> };

/**
 * The service's port while the indexer cannot start: the same API (keys, limits, errors) answering
 * 503 chain_syncing for every chain, /health 200 and /ready 503, so that clients and health checks
 * see a service that is syncing rather than one that is down.
 */
export async function openWaitingRoom(
  port: number,
  chains: readonly ServedChain[],
  settings: ApiSettings,
): Promise<WaitingRoom> {
  const access = await openAccess(settings.access, settings.database);
  const app = new Hono()
    .route(
      "/",
      probes(async () => ({ ready: false, text: "waiting for the RPC: not indexing yet" })),
    )
    .route(
      "/",
      createApp({
        store: NOTHING_INDEXED,
        history: undefined,
        alarms: NO_ALARMS,
        chains,
        access,
        behindAfterSeconds: settings.behindAfterSeconds,
      }),
    );
  const listener = getRequestListener(app.fetch);
  const http = await startHttpServer({ listener, port, trustProxy: access.trustProxy }).catch(async (error: Error) => {
    await access.close();
    throw error;
  });
  return {
    async close() {
      // At once, keep-alive connections and all: the indexer starts on the port when this has closed.
      await http.close();
      await access.close();
    },
  };
}
