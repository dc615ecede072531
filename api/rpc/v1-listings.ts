/**
 * The v1 registry's listing views (api/rpc/plan.ts), in the contract's own order: its enumerable
 * sets replayed from the wallet's events up to the block (core/v1-sets.ts). A delegate's set also
 * needs its vaults' revocations, so their events are read too.
 */
import type { Address } from "viem";
import type { CallArg } from "../../core/calldata";
import { type V1Entry, V1Sets } from "../../core/v1-sets";
import { unitsBeyond } from "../access/middleware";
import { type BlockRead, historyOf, readyPosition } from "../routes/answer";
import type { Reading } from "../routes/env";
import type { HistoryStore, V1EventRow } from "../store/history-store";
import type { Served } from "./plan";

const PAGE = 1000;

/** Every v1 event `wallets` take part in up to `block`, in chain order, each once. */
async function eventsOf(history: HistoryStore, chainId: number, wallets: Address[], block: bigint) {
  const events = new Map<string, V1EventRow & { position: { block: bigint; logIndex: number } }>();
  for (const wallet of wallets) {
    let after: { block: bigint; logIndex: number } | undefined;
    for (;;) {
      const page = await history.v1Events(chainId, wallet, { from: 0n, to: block }, { after, limit: PAGE });
      for (const event of page.items) events.set(`${event.blockNumber}|${event.logIndex}`, event);
      if (!page.more) break;
      after = page.items.at(-1)!.position;
    }
  }
  const order = (e: V1EventRow) => [e.blockNumber, BigInt(e.logIndex)] as const;
  return [...events.values()].sort((a, b) => {
    const [x, y] = [order(a), order(b)];
    return x[0] === y[0] ? Number(x[1] - y[1]) : x[0] < y[0] ? -1 : 1;
  });
}

/** The sets at `block` as far as `wallet`'s views read them, as vault or (`asDelegate`) as delegate. */
async function setsAt(
  vars: Pick<Reading, "budget">,
  history: HistoryStore,
  chainId: number,
  wallet: Address,
  block: bigint,
  asDelegate: boolean,
) {
  let events = await eventsOf(history, chainId, [wallet], block);
  if (asDelegate) {
    const vaults = new Set(events.filter((e) => e.delegate === wallet && e.vault !== wallet).map((e) => e.vault));
    if (vaults.size > 0) events = await eventsOf(history, chainId, [wallet, ...vaults], block);
  }
  // A keyless client pays for the events beyond the first hundred, as for a listing's rows.
  await vars.budget.charge(unitsBeyond(events.length));
  const sets = new V1Sets();
  for (const event of events) sets.apply(event);
  return sets;
}

/** A listing of the sets `wallet` is in, at the head or at a block. */
function setsRead(
  vars: Reading,
  chainId: number,
  wallet: Address,
  asDelegate: boolean,
  answer: (sets: V1Sets) => unknown,
): BlockRead {
  return {
    head: async () => {
      const { indexedBlock } = await readyPosition(vars, chainId);
      const sets = await setsAt(vars, historyOf(vars, chainId), chainId, wallet, indexedBlock, asDelegate);
      return { indexedBlock, ready: true, body: answer(sets) };
    },
    at: async (history, block) => answer(await setsAt(vars, history, chainId, wallet, block, asDelegate)),
  };
}

/** A vault's view: its entries of the type that `pick` keeps, as `shape` makes them. */
const vaultView =
  (
    type: V1Entry["type"],
    shape: (entry: V1Entry) => unknown,
    pick?: (entry: V1Entry, args: CallArg[]) => boolean,
  ): Served =>
  ({ vars, chainId, reads }, args) => {
    const vault = args[0] as Address;
    const entries = (sets: V1Sets) => sets.vaultEntries(vault, type).filter((entry) => pick?.(entry, args) ?? true);
    const read = reads.read(setsRead(vars, chainId, vault, false, (sets) => entries(sets).map(shape)));
    return read;
  };

const TYPE_NUMBER = { ALL: 1, CONTRACT: 2, TOKEN: 3 } as const;

/** The v1 listing views, by name. */
export const V1_LISTINGS: Record<string, Served> = {
  getDelegatesForAll: vaultView("ALL", (entry) => entry.delegate),
  getDelegatesForContract: vaultView(
    "CONTRACT",
    (entry) => entry.delegate,
    (entry, [, contract]) => entry.contract === contract,
  ),
  getDelegatesForToken: vaultView(
    "TOKEN",
    (entry) => entry.delegate,
    (entry, [, contract, tokenId]) => entry.contract === contract && entry.tokenId === tokenId,
  ),
  getContractLevelDelegations: vaultView("CONTRACT", (entry) => ({
    contract_: entry.contract,
    delegate: entry.delegate,
  })),
  getTokenLevelDelegations: vaultView("TOKEN", (entry) => ({
    contract_: entry.contract,
    tokenId: entry.tokenId,
    delegate: entry.delegate,
  })),
  getDelegationsByDelegate: ({ vars, chainId, reads }, [delegate]) =>
    reads.read(
      setsRead(vars, chainId, delegate as Address, true, (sets) =>
        sets.delegateEntries(delegate as Address).map((entry) => ({
          type_: TYPE_NUMBER[entry.type],
          vault: entry.vault,
          delegate: entry.delegate,
          contract_: entry.contract,
          tokenId: entry.tokenId,
        })),
      ),
    ),
};
