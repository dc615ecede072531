/**
 * The history as the chain itself tells it: a registry's logs (eth_getLogs) as the API's event
 * records (docs/api.md, "History"), with each block's timestamp, in chain order; and which
 * records a wallet takes part in. v1's `revokedDelegate` is not in the log (`RevokeDelegate(vault,
 * vault)` hides it): it is the delegate the call named, which the test's own writes know
 * (helpers/v1/effects.ts).
 *
 * Nothing here uses the service's code to decide what is right.
 */
import { type Abi, type Address, decodeEventLog, getAddress, type Hex, toHex } from "viem";
import { chunks, pool } from "../../devkit/pool";
import { chainClient, rpc } from "../../devkit/rpc";
import type { ApiRecord } from "./compare-listings";
import type { Effect } from "./v1/effects";
import { registryHash } from "./v2/hash";

/** A registry log as eth_getLogs gives it. */
export type Log = {
  address: Address;
  topics: [Hex, ...Hex[]];
  data: Hex;
  blockNumber: Hex;
  blockHash: Hex;
  transactionHash: Hex;
  logIndex: Hex;
};

/** Block timestamps by block hash (a reorganization gives a block number another hash). */
const timestamps = new Map<Hex, bigint>();

/** The registry's logs in blocks `from` … `to`, in chain order. */
export async function registryLogs(url: string, registry: Address, from: bigint, to: bigint): Promise<Log[]> {
  return (await rpc(url, "eth_getLogs", [{ address: registry, fromBlock: toHex(from), toBlock: toHex(to) }])) as Log[];
}

/** The timestamps of the logs' blocks, fetched once per block hash. */
async function timestampsOf(url: string, logs: readonly Log[]): Promise<void> {
  const missing = [...new Set(logs.map((l) => l.blockHash))].filter((h) => !timestamps.has(h));
  const client = chainClient(url);
  await pool(chunks(missing, 250), 4, (batch) =>
    Promise.all(
      batch.map(async (blockHash) => timestamps.set(blockHash, (await client.getBlock({ blockHash })).timestamp)),
    ),
  );
}

/** Each v2 event's delegation type, as a history record names it. */
export const V2_TYPE: Record<string, string> = {
  DelegateAll: "ALL",
  DelegateContract: "CONTRACT",
  DelegateERC721: "ERC721",
  DelegateERC20: "ERC20",
  DelegateERC1155: "ERC1155",
};

/** Where a log is: the key of the revoked delegates. */
export const logKey = (transactionHash: string, logIndex: number | bigint) =>
  `${transactionHash.toLowerCase()}:${logIndex}`;

/** The delegate each v1 RevokeDelegate log revoked: revokeDelegate's argument, revokeSelf's caller. */
export function revokedDelegates(effects: readonly Effect[]): Map<string, Address> {
  const revoked = new Map<string, Address>();
  for (const e of effects) {
    if (e.call.fn === "revokeDelegate") revoked.set(logKey(e.hash, e.logIndex), e.call.delegate);
    if (e.call.fn === "revokeSelf") revoked.set(logKey(e.hash, e.logIndex), e.actor);
  }
  return revoked;
}

const addressOrNull = (a: unknown) => (a === undefined ? null : getAddress(a as string));

/**
 * The API's event records of the logs, in chain order (the logs' own, from eth_getLogs). `revoked`
 * (v1): the delegate each RevokeDelegate log revoked; a log it lacks is a problem of the test.
 */
export async function eventRecords(
  url: string,
  version: "v1" | "v2",
  abi: Abi,
  logs: readonly Log[],
  revoked?: ReadonlyMap<string, Address>,
): Promise<ApiRecord[]> {
  await timestampsOf(url, logs);
  return logs.map((log) => {
    const { eventName, args } = decodeEventLog({ abi, data: log.data, topics: log.topics }) as unknown as {
      eventName: string;
      args: Record<string, unknown>;
    };
    const head = {
      blockNumber: BigInt(log.blockNumber),
      blockTimestamp: timestamps.get(log.blockHash)!,
      transactionHash: log.transactionHash.toLowerCase(),
      logIndex: BigInt(log.logIndex),
      event: eventName,
    };
    if (version === "v2") {
      const amount = args.amount as bigint | undefined;
      return {
        ...head,
        delegationType: V2_TYPE[eventName] ?? `unknown event ${eventName}`,
        from: getAddress(args.from as string),
        to: getAddress(args.to as string),
        contract: addressOrNull(args.contract_),
        tokenId: (args.tokenId as bigint | undefined) ?? null,
        rights: (args.rights as string).toLowerCase(),
        enable: amount === undefined ? args.enable : amount > 0n,
        amount: amount ?? null,
        hash: registryHash(
          V2_TYPE[eventName]!,
          args.rights as Hex,
          args.from as Address,
          args.to as Address,
          args.contract_ as Address | undefined,
          args.tokenId as bigint | undefined,
        ),
      };
    }
    let revokedDelegate: string | null = null;
    if (eventName === "RevokeDelegate") {
      const key = logKey(log.transactionHash, BigInt(log.logIndex));
      const delegate = revoked?.get(key);
      if (delegate === undefined) throw new Error(`the test made no call that explains the RevokeDelegate log ${key}`);
      revokedDelegate = getAddress(delegate);
    }
    return {
      ...head,
      vault: getAddress(args.vault as string),
      delegate: addressOrNull(args.delegate),
      contract: addressOrNull(args.contract_),
      tokenId: (args.tokenId as bigint | undefined) ?? null,
      value: (args.value as boolean | undefined) ?? null,
      revokedDelegate,
    };
  });
}

/** The fields that may name a wallet taking part in an event (v2: from, to; v1: vault, delegate, revoked). */
export const EVENT_PARTIES = { v2: ["from", "to"], v1: ["vault", "delegate", "revokedDelegate"] } as const;

/** The records the wallet takes part in, in their order. */
export function recordsOf(version: "v1" | "v2", records: readonly ApiRecord[], wallet: Address): ApiRecord[] {
  const w = wallet.toLowerCase();
  return records.filter((r) => EVENT_PARTIES[version].some((p) => String(r[p]).toLowerCase() === w));
}

/** The records in blocks `from` … `to`. */
export const inBlocks = (records: readonly ApiRecord[], from: bigint, to: bigint) =>
  records.filter((r) => (r.blockNumber as bigint) >= from && (r.blockNumber as bigint) <= to);

/** An event record as compared: hex data (hashes, rights) in lowercase, as its case is free. */
export function normalizeEvent(r: ApiRecord): ApiRecord {
  const lower = (v: unknown) => (typeof v === "string" ? v.toLowerCase() : v);
  return {
    ...r,
    transactionHash: lower(r.transactionHash),
    ...("rights" in r ? { rights: lower(r.rights), hash: lower(r.hash) } : {}),
  };
}
