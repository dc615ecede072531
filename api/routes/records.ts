/**
 * The JSON records the API answers with (docs/api.md, "Outputs", "History"): addresses in
 * EIP-55 case, integers exact (bigints, written by api/http/json.ts), `null` where a field does not apply.
 */
import type { Address } from "viem";
import { checksumAddress } from "../../core/keccak";
import { isAmountType, V2_RECORD_TYPE, type V2DelegationType, type V2Vault } from "../../core/v2";
import type { V1EventRow, V2EventRow } from "../store/history-store";
import type { Checksum, V1Row, V2Row } from "../store/store";

/** A v2 delegation as listed. */
export const v2Record = (d: V2Row, checksum: Checksum = checksumAddress) => ({
  type: V2_RECORD_TYPE[d.delegationType],
  from: checksum(d.from),
  to: checksum(d.to),
  contract: d.contract && checksum(d.contract),
  tokenId: d.tokenId,
  delegationType: d.delegationType,
  rights: d.rights,
  amount: d.amount,
  hash: d.hash,
});

/** A v1 delegation as listed. */
export const v1Record = (d: V1Row, checksum: Checksum = checksumAddress) => ({
  type: d.type,
  vault: checksum(d.vault),
  delegate: checksum(d.delegate),
  contract: d.type === "ALL" ? null : checksum(d.contract),
  tokenId: d.type === "TOKEN" ? d.tokenId : null,
});

/** The delegation type of each v2 event. */
const V2_EVENT_TYPE: Record<string, V2DelegationType> = {
  DelegateAll: "ALL",
  DelegateContract: "CONTRACT",
  DelegateERC721: "ERC721",
  DelegateERC20: "ERC20",
  DelegateERC1155: "ERC1155",
};

/** The fields every event record starts with. */
const eventHead = (e: V2EventRow | V1EventRow) => ({
  blockNumber: e.blockNumber,
  blockTimestamp: e.blockTimestamp,
  transactionHash: e.transactionHash,
  logIndex: e.logIndex,
  event: e.kind,
});

const addressOrNull = (a: string | null) => (a === null ? null : checksumAddress(a));

/** A v2 event as the history lists it: for ERC20 and ERC1155, `enable` is `amount > 0`. */
export function v2EventRecord(e: V2EventRow) {
  const delegationType = V2_EVENT_TYPE[e.kind]!;
  const amounts = isAmountType(delegationType);
  return {
    ...eventHead(e),
    delegationType,
    from: checksumAddress(e.from),
    to: checksumAddress(e.to),
    contract: addressOrNull(e.contract),
    tokenId: e.tokenId,
    rights: e.rights,
    enable: amounts ? e.amount! > 0n : e.enable,
    amount: amounts ? e.amount : null,
    hash: e.hash,
  };
}

/** A v1 event as the history lists it, with the delegate a RevokeDelegate revoked. */
export const v1EventRecord = (e: V1EventRow) => ({
  ...eventHead(e),
  vault: checksumAddress(e.vault),
  delegate: addressOrNull(e.delegate),
  contract: addressOrNull(e.contract),
  tokenId: e.tokenId,
  value: e.value,
  revokedDelegate: addressOrNull(e.revokedDelegate),
});

/** A vault the hot wallet may act for; for erc20 and erc1155 checks, with the amount the check answers. */
export const v2VaultRecord = ({ vault, answer }: V2Vault) =>
  answer === true ? { vault: checksumAddress(vault) } : { vault: checksumAddress(vault), amount: answer };

/** A vault the delegate may act for. */
export const v1VaultRecord = (vault: Address) => ({ vault: checksumAddress(vault) });
