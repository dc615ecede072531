import { type Context, type Event, ponder } from "ponder:registry";
import {
  v1Delegation,
  v1DelegationChange,
  v1Event,
  v1PairVersion,
  v1VaultVersion,
  v1VersionChange,
} from "ponder:schema";
import { type Address, type Hex, zeroAddress } from "viem";
import { causes } from "../core/errors";
import {
  type CallFrame,
  registryCalls,
  V1_EVENT_NAME,
  type V1Type,
  type V1Versions,
  v1NextState,
  v1RevokedPair,
} from "../core/v1";
import { recordEventBlock } from "./ChainHead";

type V1EventName =
  | "RegistryV1:DelegateForAll"
  | "RegistryV1:DelegateForContract"
  | "RegistryV1:DelegateForToken"
  | "RegistryV1:RevokeAllDelegates"
  | "RegistryV1:RevokeDelegate";

type Args = { vault: Address; delegate?: Address; contract_?: Address; tokenId?: bigint; value?: boolean };

const lower = (address: Address) => address.toLowerCase() as Address;

/** The event's history row; every handler ends with it. */
async function history(
  event: Event<V1EventName>,
  context: Context<V1EventName>,
  kind: string,
  revokedDelegate?: Address,
) {
  const args = event.args as Args;
  await recordEventBlock(context, event.block.number);
  await context.db.insert(v1Event).values({
    id: event.id,
    chainId: context.chain.id,
    blockNumber: event.block.number,
    blockHash: event.block.hash,
    blockTimestamp: event.block.timestamp,
    transactionHash: event.transaction.hash,
    logIndex: event.log.logIndex,
    kind,
    vault: lower(args.vault),
    delegate: args.delegate ? lower(args.delegate) : null,
    contract: args.contract_ ? lower(args.contract_) : null,
    tokenId: args.tokenId ?? null,
    value: args.value ?? null,
    revokedDelegate: revokedDelegate ?? null,
  });
}

async function versions(context: Context<V1EventName>, vault: Address, delegate: Address): Promise<V1Versions> {
  const chainId = context.chain.id;
  const [v, p] = await Promise.all([
    context.db.find(v1VaultVersion, { chainId, vault }),
    context.db.find(v1PairVersion, { chainId, vault, delegate }),
  ]);
  return { vault: v?.version ?? 0, pair: p?.version ?? 0 };
}

async function delegate(type: V1Type, event: Event<V1EventName>, context: Context<V1EventName>) {
  const args = event.args as Required<Args>;
  const chainId = context.chain.id;
  const key = {
    chainId,
    vault: lower(args.vault),
    delegate: lower(args.delegate),
    type,
    contract: type === "ALL" ? zeroAddress : lower(args.contract_),
    tokenId: type === "TOKEN" ? args.tokenId : 0n,
  };
  const [prev, current] = await Promise.all([
    context.db.find(v1Delegation, key),
    versions(context, key.vault, key.delegate),
  ]);
  const next = v1NextState(prev ?? undefined, args.value, current, {
    block: event.block.number,
    logIndex: event.log.logIndex,
  });
  if (next) {
    const { enabled, vaultVersion, pairVersion, createdBlock, createdLogIndex } = next;
    const state = {
      enabled,
      vaultVersion,
      pairVersion,
      createdBlock,
      createdLogIndex,
      updatedBlock: event.block.number,
    };
    await context.db
      .insert(v1Delegation)
      .values({ ...key, ...state })
      .onConflictDoUpdate(state);
    await context.db.insert(v1DelegationChange).values({
      ...key,
      id: event.id,
      blockNumber: event.block.number,
      logIndex: event.log.logIndex,
      enabled,
      vaultVersion,
      pairVersion,
      createdBlock,
      createdLogIndex,
    });
  }
  await history(event, context, V1_EVENT_NAME[type]);
}

/**
 * The pair a `RevokeDelegate(vault, vault)` voids. A direct call shows it in the transaction's
 * input; a call made by a contract wallet shows it only in the call trace, which needs the RPC's
 * `debug_traceTransaction` (callTracer). Without it the service stops rather than guess.
 */
async function revokedPair(event: Event<"RegistryV1:RevokeDelegate">, context: Context<"RegistryV1:RevokeDelegate">) {
  const { transaction: tx, log } = event;
  if (tx.to !== null && lower(tx.to) === lower(log.address)) return v1RevokedPair(tx.from, tx.input);

  let trace: CallFrame;
  try {
    trace = (await context.client.request({
      method: "debug_traceTransaction",
      params: [tx.hash, { tracer: "callTracer" }],
    } as never)) as CallFrame;
  } catch (error) {
    // Anything else (a timeout, a 429 after Ponder's retries) is an outage, not a missing capability.
    if (!methodUnavailable(error)) throw error;
    throw new Error(
      `v1 revokeDelegate in transaction ${tx.hash} (chain ${context.chain.id}) was called through a contract, so ` +
        "only a call trace names the revoked delegate, and the RPC does not serve debug_traceTransaction with " +
        "callTracer " +
        `("${(error as { shortMessage?: string }).shortMessage ?? (error as Error).message.split("\n")[0]}"). ` +
        "Configure an RPC URL for this chain that serves the debug namespace.",
    );
  }
  const receipt = await context.client.getTransactionReceipt({ hash: tx.hash });
  const registryLogs = receipt.logs.filter((l) => lower(l.address) === lower(log.address)).map((l) => l.logIndex);
  const call = registryCalls(trace, log.address)[registryLogs.indexOf(log.logIndex)];
  if (call === undefined) throw new Error(`no registry call in the trace of ${tx.hash} matches log ${log.logIndex}`);
  return v1RevokedPair(call.from, call.input as Hex);
}

/** How RPCs say in words that a method is not served. */
const NOT_SERVED = new RegExp(
  [
    "method .*(not (found|supported|available|exist)|does not exist|unsupported)",
    "namespace .*(disabled|not enabled)",
  ].join("|"),
  "i",
);

/** Whether an RPC error says the method is not served (JSON-RPC -32601, or the like in words). */
const methodUnavailable = (error: unknown) =>
  [...causes(error)].some((e) => (e as { code?: unknown }).code === -32601 || NOT_SERVED.test(e.message));

/** Bumps a version counter (the vault's when `delegate` is null, else the pair's) and logs its new value. */
async function bumpVersion(
  event: Event<V1EventName>,
  context: Context<V1EventName>,
  vault: Address,
  delegate: Address | null,
) {
  const chainId = context.chain.id;
  const updatedBlock = event.block.number;
  const bump = (row: { version: number }) => ({ version: row.version + 1, updatedBlock });
  const { version } =
    delegate === null
      ? await context.db
          .insert(v1VaultVersion)
          .values({ chainId, vault, version: 1, updatedBlock })
          .onConflictDoUpdate(bump)
      : await context.db
          .insert(v1PairVersion)
          .values({ chainId, vault, delegate, version: 1, updatedBlock })
          .onConflictDoUpdate(bump);
  await context.db.insert(v1VersionChange).values({
    id: event.id,
    chainId,
    blockNumber: updatedBlock,
    logIndex: event.log.logIndex,
    vault,
    delegate,
    version,
  });
}

ponder.on("RegistryV1:DelegateForAll", ({ event, context }) => delegate("ALL", event, context));
ponder.on("RegistryV1:DelegateForContract", ({ event, context }) => delegate("CONTRACT", event, context));
ponder.on("RegistryV1:DelegateForToken", ({ event, context }) => delegate("TOKEN", event, context));

ponder.on("RegistryV1:RevokeAllDelegates", async ({ event, context }) => {
  await bumpVersion(event, context, lower(event.args.vault), null);
  await history(event, context, "RevokeAllDelegates");
});

ponder.on("RegistryV1:RevokeDelegate", async ({ event, context }) => {
  const { vault, delegate: sender } = event.args;
  // revokeSelf emits the real pair; only (vault, vault) can hide a revokeDelegate(x).
  const pair =
    lower(vault) === lower(sender)
      ? await revokedPair(event, context)
      : { vault: lower(vault), delegate: lower(sender) };
  await bumpVersion(event, context, pair.vault, pair.delegate);
  await history(event, context, "RevokeDelegate", pair.delegate);
});
