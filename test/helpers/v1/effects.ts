/** What v1 transactions did on chain: each registry log paired with the call that made it. */
import { type Abi, type Address, decodeEventLog, type Hex } from "viem";
import type { Receipt } from "../../../devkit/send";
import type { RegistryCall } from "../../../devkit/v1/calls";
import { doneCalls, type Tx } from "../../../devkit/v1/generate";
import { before, type Position } from "../position";

const lower = (a: string) => a.toLowerCase() as Address;

/** A registry write that took effect, where its log is. */
export type Effect = Position & { actor: Address; call: RegistryCall; tx: Tx; hash: Hex };

/**
 * Pairs each transaction's registry logs with the calls that should have made them, checking each
 * log is the event its call emits. Returns the effects in chain order and any disagreement.
 */
export function effectsOf(
  abi: Abi,
  registry: Address,
  txs: Tx[],
  receipts: Receipt[],
): { effects: Effect[]; problems: string[] } {
  const effects: Effect[] = [];
  const problems: string[] = [];
  txs.forEach((tx, i) => {
    const r = receipts[i]!;
    const logs = r.logs.filter((l) => lower(l.address) === lower(registry));
    const calls = doneCalls(tx);
    if (logs.length !== calls.length) {
      problems.push(
        `${r.transactionHash}: ${logs.length} registry logs for ${calls.length} calls that take effect (${tx.route})`,
      );
      return;
    }
    logs.forEach((log, k) => {
      const call = calls[k]!;
      const { eventName, args } = decodeEventLog({ abi, data: log.data, topics: log.topics }) as unknown as {
        eventName: string;
        args: Record<string, unknown>;
      };
      const a = (name: string) => (typeof args[name] === "string" ? lower(args[name] as string) : args[name]);
      const actor = tx.actor;
      const want: [string, Record<string, unknown>] = (() => {
        switch (call.fn) {
          case "delegateForAll":
            return ["DelegateForAll", { vault: actor, delegate: call.delegate, value: call.value }];
          case "delegateForContract":
            return [
              "DelegateForContract",
              { vault: actor, delegate: call.delegate, contract_: call.contract, value: call.value },
            ];
          case "delegateForToken":
            return [
              "DelegateForToken",
              {
                vault: actor,
                delegate: call.delegate,
                contract_: call.contract,
                tokenId: call.tokenId,
                value: call.value,
              },
            ];
          case "revokeAllDelegates":
            return ["RevokeAllDelegates", { vault: actor }];
          case "revokeDelegate":
            // The contract's quirk: the revoked delegate is not in the event.
            return ["RevokeDelegate", { vault: actor, delegate: actor }];
          case "revokeSelf":
            return ["RevokeDelegate", { vault: call.vault, delegate: actor }];
          case "checkDelegateForAll":
            throw new Error("a view emits nothing");
        }
      })();
      const same = (x: unknown, y: unknown) => (typeof y === "string" ? lower(y) === x : x === y);
      const ok = eventName === want[0] && Object.entries(want[1]).every(([k2, v]) => same(a(k2), v));
      if (!ok)
        problems.push(
          `${r.transactionHash} log ${Number(log.logIndex)}: ${eventName} ${JSON.stringify(args, big)} for ` +
            `${JSON.stringify(call, big)} by ${actor}`,
        );
      effects.push({
        actor,
        call,
        tx,
        hash: r.transactionHash,
        block: BigInt(log.blockNumber),
        logIndex: Number(log.logIndex),
      });
    });
  });
  effects.sort((x, y) => (before(x, y) ? -1 : before(y, x) ? 1 : 0));
  return { effects, problems };
}

const big = (_: string, v: unknown) => (typeof v === "bigint" ? v.toString() : v);
