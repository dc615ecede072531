/** The real registries (../shared/oracle beside the repository): their installer for anvil, ABIs and addresses. */
import type { Abi, Address } from "viem";

type Installer = {
  installRegistries(url: string): Promise<{ v1: Address; v2: Address }>;
  abis: { v1: Abi; v2: Abi };
  addresses: { v1: { address: Address }; v2: { address: Address } };
};

// The installer is plain JS without declarations: a specifier held in a variable keeps the type
// checker out of it, whatever declarations other files add for it.
const specifier: string = new URL("../../shared/oracle/install.mjs", import.meta.url).href;
const oracle = (await import(specifier)) as Installer;

/** Installs both registries on the chain at `url`, at their canonical addresses; resolves to those. */
export const installRegistries = oracle.installRegistries;
export const abis = oracle.abis;
export const addresses = oracle.addresses;
