/**
 * The registry's delegation hash (its RegistryHashes library) made from viem's encodePacked and
 * keccak256, apart from the service's own hashing (core/v2.ts): keccak256 of the packed (rights,
 * from, to[, contract][, tokenId]), shifted left one byte, with the delegation type in the last byte.
 */
import { type Address, encodePacked, type Hex, keccak256 } from "viem";

const TYPE_BYTE: Record<string, string> = { ALL: "01", CONTRACT: "02", ERC721: "03", ERC20: "04", ERC1155: "05" };

export function registryHash(
  type: string,
  rights: Hex,
  from: Address,
  to: Address,
  contract?: Address,
  tokenId?: bigint,
): Hex {
  const packed =
    type === "ALL"
      ? encodePacked(["bytes32", "address", "address"], [rights, from, to])
      : type === "ERC721" || type === "ERC1155"
        ? encodePacked(["bytes32", "address", "address", "address", "uint256"], [rights, from, to, contract!, tokenId!])
        : encodePacked(["bytes32", "address", "address", "address"], [rights, from, to, contract!]);
  return `0x${keccak256(packed).slice(4)}${TYPE_BYTE[type]}`;
}
