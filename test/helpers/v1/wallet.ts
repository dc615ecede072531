/**
 * The contract wallet of the v1 tests' transactions (devkit/v1/generate.ts names their routes): a
 * minimal wallet anyone may make call anything, compiled with solc, and each transaction encoded
 * through it.
 */
import { type Abi, type Address, encodeFunctionData, type Hex } from "viem";
import type { TxRequest } from "../../../devkit/send";
import { encodeCall, type RegistryCall } from "../../../devkit/v1/calls";
import type { Fate, Tx } from "../../../devkit/v1/generate";
import { compileSolidity } from "../../../scripts/solidity";

/**
 * A minimal contract wallet: anyone may make it call anything. `forwardManyUndoSome` makes some of
 * its calls inside a frame that reverts after the call succeeded (`undoMask`: the registry call is
 * in the trace, its log is discarded) or with too little gas to succeed (`starveMask`: a reverted
 * registry frame).
 */
const WALLET_SOURCE = `// SPDX-License-Identifier: CC0-1.0
pragma solidity ^0.8.20;

contract ForwardingWallet {
    function forward(address target, bytes calldata data) external returns (bytes memory) {
        return _call(target, data);
    }

    function forwardMany(address target, bytes[] calldata data) external {
        for (uint256 i = 0; i < data.length; i++) _call(target, data[i]);
    }

    function forwardManyUndoSome(address target, bytes[] calldata data, uint256 undoMask, uint256 starveMask) external {
        for (uint256 i = 0; i < data.length; i++) {
            if ((undoMask >> i) & 1 == 1) {
                try this.callThenRevert(target, data[i]) {
                    revert("undo did not revert");
                } catch {}
            } else if ((starveMask >> i) & 1 == 1) {
                (bool ok, ) = target.call{gas: 2300}(data[i]);
                require(!ok, "starved call succeeded");
            } else {
                _call(target, data[i]);
            }
        }
    }

    function callThenRevert(address target, bytes calldata data) external {
        _call(target, data);
        revert("undone");
    }

    function _call(address target, bytes calldata data) private returns (bytes memory ret) {
        bool ok;
        (ok, ret) = target.call(data);
        if (!ok) assembly { revert(add(ret, 32), mload(ret)) }
    }
}
`;

export type CompiledWallet = { abi: Abi; bytecode: Hex };

/** Compiles the wallet with solc (standard JSON, in-process). */
export function compileWallet(): CompiledWallet {
  const contract = compileSolidity("ForwardingWallet.sol", WALLET_SOURCE).ForwardingWallet;
  if (!contract) throw new Error("solc produced no ForwardingWallet");
  return { abi: contract.abi, bytecode: contract.bytecode };
}

const callGas = (c: RegistryCall) => (c.fn.startsWith("delegateFor") ? 260_000n : 70_000n);

/** The transaction that makes `tx`'s calls, directly or through its wallets, with gas to spare. */
export function txRequest(tx: Tx, registry: Address, registryAbi: Abi, wallet: CompiledWallet): TxRequest {
  const data = tx.calls.map((i) => encodeCall(registryAbi, i.call));
  const gas = 80_000n + tx.calls.reduce((sum, i) => sum + callGas(i.call) + 40_000n, 0n);
  const base = { from: tx.from, nonce: tx.nonce, gas };
  const w = (functionName: string, args: readonly unknown[]) =>
    encodeFunctionData({ abi: wallet.abi, functionName, args } as never);
  switch (tx.route) {
    case "direct":
      if (tx.calls.length !== 1) throw new Error("a direct transaction makes one call");
      return { ...base, to: registry, data: data[0]! };
    case "forward":
      return { ...base, to: tx.via[0]!, data: w("forward", [registry, data[0]!]) };
    case "forwardMany":
      return { ...base, to: tx.via[0]!, data: w("forwardMany", [registry, data]) };
    case "forwardUndo": {
      const mask = (fate: Fate) => tx.calls.reduce((m, i, k) => (i.fate === fate ? m | (1n << BigInt(k)) : m), 0n);
      return {
        ...base,
        to: tx.via[0]!,
        data: w("forwardManyUndoSome", [registry, data, mask("undone"), mask("starved")]),
      };
    }
    case "nested":
      return { ...base, to: tx.via[0]!, data: w("forward", [tx.via[1]!, w("forwardMany", [registry, data])]) };
  }
}
