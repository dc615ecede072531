import { type Context, type Event, ponder } from "ponder:registry";
import { v1Delegation, v1PairVersion, v1VaultVersion } from "ponder:schema";
import type { Address, Hex, Log } from "viem";
import { causes } from "../core/errors";
import { type CallFrame, registryCalls, type V1Type, v1PairsRevokedAs, v1RevokedPair } from "../core/v1";
import { v1Delegated, v1DelegateWrites, v1RevokeWrites } from "../core/v1-rows";
import { eventPlace, write } from "./writes";

type V1EventName =
  | "RegistryV1:DelegateForAll"
  | "RegistryV1:DelegateForContract"
  | "RegistryV1:DelegateForToken"
  | "RegistryV1:RevokeAllDelegates"
  | "RegistryV1:RevokeDelegate";

const lower = (address: Address) => address.toLowerCase() as Address;

/** A counter's value (the vault's when `delegate` is undefined, else the pair's): 0 until first bumped. */
async function version(context: Context<V1EventName>, vault: Address, delegate?: Address) {
  const chainId = context.chain.id;
  const row = await (delegate === undefined
    ? context.db.find(v1VaultVersion, { chainId, vault })
    : context.db.find(v1PairVersion, { chainId, vault, delegate }));
  return row?.version ?? 0;
}

async function delegate(type: V1Type, event: Event<V1EventName>, context: Context<V1EventName>) {
  const logged = v1Delegated(type, event.args as Parameters<typeof v1Delegated>[1]);
  const { key } = logged;
  const [prev, vault, pair] = await Promise.all([
    context.db.find(v1Delegation, { chainId: context.chain.id, ...key }),
    version(context, key.vault),
    version(context, key.vault, key.delegate),
  ]);
  await write(context.db, v1DelegateWrites(eventPlace(event, context), logged, prev ?? undefined, { vault, pair }));
}

/**
 * The pair a `RevokeDelegate(vault, vault)` voids. A direct call shows it in the transaction's
 * input; a call made by a contract wallet shows it only in the call trace, which needs the RPC's
 * `debug_traceTransaction` (callTracer). Without it the service stops rather than guess. Only when
 * the trace holds such calls for different pairs does the receipt say which log is whose.
 */
async function revokedPair(event: Event<"RegistryV1:RevokeDelegate">, context: Context<"RegistryV1:RevokeDelegate">) {
  const { transaction: tx, log } = event;
  if (tx.to !== null && lower(tx.to) === lower(log.address)) return v1RevokedPair(tx.from, tx.input);

  const calls = transactionCalls(event, context);
  const traced = registryCalls(await calls.trace, log.address);
  const [first, ...rest] = v1PairsRevokedAs(traced, event.args.vault);
  if (first !== undefined && rest.every((pair) => pair.delegate === first.delegate)) return first;

  const receipt = await calls.receipt();
  const registryLogs = receipt.logs.filter((l) => lower(l.address) === lower(log.address)).map((l) => l.logIndex);
  const call = traced[registryLogs.indexOf(log.logIndex)];
  if (call === undefined) throw new Error(`no registry call in the trace of ${tx.hash} matches log ${log.logIndex}`);
  return v1RevokedPair(call.from, call.input as Hex);
}

type TransactionCalls = { trace: Promise<CallFrame>; receipt: () => Promise<{ logs: readonly Log[] }> };
let lastTransaction: { key: string; calls: TransactionCalls } | undefined;

/**
 * A transaction's call trace, and its receipt when asked, kept for its next registry event: a
 * contract wallet's batch revokes many pairs in one transaction, and handlers run in log order, so
 * one entry (keyed by block hash as well, since a reorganized block's execution may differ) suffices.
 */
function transactionCalls(event: Event<"RegistryV1:RevokeDelegate">, context: Context<"RegistryV1:RevokeDelegate">) {
  const { transaction: tx, block } = event;
  const key = `${context.chain.id}:${block.hash}:${tx.hash}`;
  if (lastTransaction?.key !== key) {
    const trace = traceOf(tx.hash, context);
    let receipt: Promise<{ logs: readonly Log[] }> | undefined;
    const calls: TransactionCalls = {
      trace,
      receipt: () => {
        receipt ??= forgetOnFailure(context.client.getTransactionReceipt({ hash: tx.hash }), calls);
        return receipt;
      },
    };
    forgetOnFailure(trace, calls);
    lastTransaction = { key, calls };
  }
  return lastTransaction.calls;
}

/** A failure is not kept: the handler's retry asks again. */
function forgetOnFailure<T>(request: Promise<T>, calls: TransactionCalls) {
  request.catch(() => {
    if (lastTransaction?.calls === calls) lastTransaction = undefined;
  });
  return request;
}

async function traceOf(hash: Hex, context: Context<"RegistryV1:RevokeDelegate">): Promise<CallFrame> {
  try {
    return (await context.client.request({
      method: "debug_traceTransaction",
      params: [hash, { tracer: "callTracer" }],
    } as never)) as CallFrame;
  } catch (error) {
    // Anything else (a timeout, a 429 after Ponder's retries) is an outage, not a missing capability.
    if (!methodUnavailable(error)) throw error;
    throw new Error(
      `v1 revokeDelegate in transaction ${hash} (chain ${context.chain.id}) was called through a contract, so ` +
        "only a call trace names the revoked delegate, and the RPC does not serve debug_traceTransaction with " +
        "callTracer " +
        `("${(error as { shortMessage?: string }).shortMessage ?? (error as Error).message.split("\n")[0]}"). ` +
        "Configure an RPC URL for this chain that serves the debug namespace.",
    );
  }
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

ponder.on("RegistryV1:DelegateForAll", ({ event, context }) => delegate("ALL", event, context));
ponder.on("RegistryV1:DelegateForContract", ({ event, context }) => delegate("CONTRACT", event, context));
ponder.on("RegistryV1:DelegateForToken", ({ event, context }) => delegate("TOKEN", event, context));

ponder.on("RegistryV1:RevokeAllDelegates", async ({ event, context }) => {
  const vault = lower(event.args.vault);
  const revoked = { kind: "RevokeAllDelegates", vault } as const;
  await write(context.db, v1RevokeWrites(eventPlace(event, context), revoked, await version(context, vault)));
});

ponder.on("RegistryV1:RevokeDelegate", async ({ event, context }) => {
  const [vault, sender] = [lower(event.args.vault), lower(event.args.delegate)];
  // revokeSelf emits the real pair; only (vault, vault) can hide a revokeDelegate(x).
  const pair = vault === sender ? await revokedPair(event, context) : { vault, delegate: sender };
  const revoked = { kind: "RevokeDelegate", vault, sender, pair } as const;
  const before = await version(context, pair.vault, pair.delegate);
  await write(context.db, v1RevokeWrites(eventPlace(event, context), revoked, before));
});
