import { toJson } from "../http/json";
import { chainStatus } from "../watch/chain-status";
import type { Answers } from "./table";

/** The chains this instance serves: registries, indexed block and sync state, for operators and clients. */
export const CHAINS_ANSWERS: Answers = {
  chains: () => async (c) => {
    const states = await c.var.store.chainStates();
    const now = Math.floor(Date.now() / 1000);
    const body = c.var.chains.map((chain) => {
      const state = states.get(chain.id);
      return {
        chainId: chain.id,
        name: chain.name,
        title: chain.title,
        testnet: chain.testnet,
        registries: { v1: chain.v1 ?? null, v2: chain.v2 ?? null },
        indexedBlock: state?.indexedBlock ?? null,
        ...chainStatus(state, now, c.var.behindAfterSeconds, c.var.alarms.current().has(chain.id)),
        alarm: c.var.alarms.current().get(chain.id) ?? null,
        // Its own Ponder's state where chains are indexed apart; null where one indexes them all.
        indexer: c.var.indexers?.().get(chain.id) ?? null,
      };
    });
    return c.body(toJson(body), 200, { "Content-Type": "application/json" });
  },
};
