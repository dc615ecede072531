import solc from "solc";
import type { Abi, Hex } from "viem";

export type CompiledContract = { abi: Abi; bytecode: Hex; deployedBytecode: Hex };

/**
 * Compiles one Solidity source with the npm `solc` (standard JSON, in-process: no download, works
 * offline) and returns each of its contracts by name. The only place the project drives solc.
 */
export function compileSolidity(fileName: string, source: string): Record<string, CompiledContract> {
  const input = {
    language: "Solidity",
    sources: { [fileName]: { content: source } },
    settings: {
      optimizer: { enabled: true, runs: 200 },
      // Paris: no PUSH0, so the code runs on every chain a test or the demo may use.
      evmVersion: "paris",
      outputSelection: { "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts?: Record<
      string,
      Record<string, { abi: Abi; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>
    >;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === "error");
  if (errors.length) throw new Error(`solc: ${errors.map((e) => e.formattedMessage).join("\n")}`);
  return Object.fromEntries(
    Object.entries(output.contracts?.[fileName] ?? {}).map(([name, c]) => [
      name,
      { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}`, deployedBytecode: `0x${c.evm.deployedBytecode.object}` },
    ]),
  );
}
