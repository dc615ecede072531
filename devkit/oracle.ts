/**
 * The real registries, from the fixtures in devkit/registries/ (their README says where the files
 * come from): the installer for anvil, their ABIs and their addresses.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Abi, Address, Hex } from "viem";
import { rpc } from "./rpc";

const REGISTRIES = join(import.meta.dirname, "registries");
const fixture = (name: string) => readFileSync(join(REGISTRIES, name), "utf8");

type Version = "v1" | "v2";
const VERSIONS: readonly Version[] = ["v1", "v2"];

/** The mainnet addresses (and v2's on zkSync-type chains, where CREATE2 derives another). */
export const addresses = JSON.parse(fixture("addresses.json")) as {
  v1: { name: string; address: Address; solc: string };
  v2: { name: string; address: Address; addressZkSyncChains: Address; solc: string };
};

/** The registries' full ABIs: events, writes and views. */
export const abis: Record<Version, Abi> = {
  v1: JSON.parse(fixture("registry-v1.abi.json")) as Abi,
  v2: JSON.parse(fixture("registry-v2.abi.json")) as Abi,
};

/** A registry's creation code, as mainnet's deployment sent it (the file ends in a newline). */
export const creationCode = (version: Version) => fixture(`registry-${version}.initcode.hex`).trim() as Hex;

type Receipt = { status: Hex; contractAddress: Address } | null;

async function receiptOf(url: string, hash: Hex): Promise<NonNullable<Receipt>> {
  for (let i = 0; i < 600; i++) {
    const receipt = (await rpc(url, "eth_getTransactionReceipt", [hash])) as Receipt;
    if (receipt) return receipt;
    await new Promise((ok) => setTimeout(ok, 50));
  }
  throw new Error(`no receipt for ${hash}`);
}

/**
 * Installs both registries on the anvil chain at `url`, at their mainnet addresses; resolves to
 * those. Each is deployed from its creation code, then its runtime code is set at the mainnet
 * address (the CREATE2 factory that put it there on mainnet is not on anvil). A registry already
 * there is kept.
 */
export async function installRegistries(url: string): Promise<Record<Version, Address>> {
  const [from] = (await rpc(url, "eth_accounts")) as Address[];
  for (const version of VERSIONS) {
    const target = addresses[version].address;
    const existing = (await rpc(url, "eth_getCode", [target, "latest"])) as Hex;
    if (existing && existing !== "0x") continue;
    const hash = (await rpc(url, "eth_sendTransaction", [
      { from, data: creationCode(version), gas: "0x1c9c380" },
    ])) as Hex;
    const receipt = await receiptOf(url, hash);
    if (receipt.status !== "0x1") throw new Error(`deploying registry ${version} failed`);
    const code = await rpc(url, "eth_getCode", [receipt.contractAddress, "latest"]);
    await rpc(url, "anvil_setCode", [target, code]);
  }
  return { v1: addresses.v1.address, v2: addresses.v2.address };
}
