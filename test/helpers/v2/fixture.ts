/**
 * The v2 delegations' values that the v2 route tests share: in process (test/app/v2-inputs) and
 * against the real registry (test/v2.http), the same contracts, amounts and rights.
 */
import { type Address, getAddress, keccak256, maxUint256, stringToHex, toHex } from "viem";

export const MAX_S = maxUint256.toString();
export const ERC20_AMOUNT = 1000n;
/** Past 2^53: a JSON number written through a double would lose digits. */
export const ERC1155_AMOUNT = 123456789012345678901234567890n;
export const ERC1155_TOKEN = 7n;

export const CLAIM = stringToHex("claim", { size: 32 });

/** A deterministic address with letters in it (so its case matters). */
export const addressOf = (label: string): Address => getAddress(keccak256(toHex(label)).slice(0, 42));
export const C_CONTRACT = addressOf("contract delegation");
export const C_721 = addressOf("erc721 collection");
export const C_20 = addressOf("erc20 token");
export const C_1155 = addressOf("erc1155 collection");
export const C_OTHER = addressOf("never delegated");
