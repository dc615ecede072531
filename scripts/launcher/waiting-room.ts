import type { Server } from "node:http";
import { type ServerType, serve } from "@hono/node-server";
import { Hono } from "hono";
import { openAccess } from "../../api/access/open";
import { createApp, type ServedChain } from "../../api/app";
import { answerClientErrors } from "../../api/client-error";
import { probes } from "../../api/probes";
import type { Store } from "../../api/store";

/** Nothing is indexed yet: every chain answers chain_syncing. */
const nothingIndexed: Store = {
  v2Enabled: async () => undefined,
  v2Wallet: async () => undefined,
  v1InForce: async () => undefined,
  v1Wallet: async () => undefined,
  chainStates: async () => new Map(),
};

export type WaitingRoom = { close(): Promise<void> };

/**
 * The service's port while the indexer cannot start: the same API (keys, limits, errors) answering
 * 503 chain_syncing for every chain, /health 200 and /ready 503, so that clients and health checks
 * see a service that is syncing rather than one that is down.
 */
export async function openWaitingRoom(
  port: number,
  chains: readonly ServedChain[],
  env: NodeJS.ProcessEnv,
): Promise<WaitingRoom> {
  const access = await openAccess(env);
  const app = new Hono()
    .route(
      "/",
      probes(async () => ({ ready: false, text: "waiting for the RPC: not indexing yet" })),
    )
    .route("/", createApp({ store: nothingIndexed, chains, access }));
  const server: ServerType = await new Promise((listening, fail) => {
    const s = serve({ fetch: app.fetch, port }, () => listening(s));
    s.once("error", fail);
  });
  answerClientErrors(server as Server);
  return {
    async close() {
      // Idle keep-alive connections would hold the port past the handover to the indexer.
      await new Promise<void>((closed) => {
        server.close(() => closed());
        (server as Server).closeAllConnections();
      });
      await access.close();
    },
  };
}
