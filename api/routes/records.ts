/**
 * The JSON records the API answers with (docs/api.md, "Outputs", "History"): addresses in
 * EIP-55 case, integers exact (bigints, written by api/http/json.ts), `null` where a field does not apply.
 */
import type { Address } from "viem";
import { checksumAddress } from "../../core/keccak";
import { isAmountType, V2_RECORD_TYPE, type V2DelegationType, type V2Vault } from "../../core/v2";
import { asciiBytes, JsonBytes } from "../http/json-bytes";
import type { V1EventRow, V2EventRow } from "../store/history-store";
import type { AddressJson, Checksum, V1Row, V2Row } from "../store/store";

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

/**
 * A page of v2 events as JSON, the text toJson writes of their v2EventRecords (held to it by
 * records.test.ts), written without the records: made as objects, then serialized, a page of 1,000
 * spent most of its time making and collecting them (docs/performance.md, "History pages as bytes").
 */
export function v2EventsJson(events: readonly V2EventRow[], spell?: AddressJson): Uint8Array<ArrayBuffer> {
  const out = eventsJson.reset().byte(OPEN);
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!;
    const delegationType = V2_EVENT_TYPE[e.kind];
    const amounts = delegationType !== undefined && isAmountType(delegationType);
    eventHeadJson(e, i, out).raw(V2_EVENT_FIELDS.delegationType).value(delegationType).raw(V2_EVENT_FIELDS.from);
    addressJson(e.from, out, spell).raw(V2_EVENT_FIELDS.to);
    addressJson(e.to, out, spell).raw(V2_EVENT_FIELDS.contract);
    addressJson(e.contract, out, spell)
      .raw(V2_EVENT_FIELDS.tokenId)
      .value(e.tokenId)
      .raw(V2_EVENT_FIELDS.rights)
      .value(e.rights)
      .raw(V2_EVENT_FIELDS.enable)
      .value(amounts ? e.amount! > 0n : e.enable)
      .raw(V2_EVENT_FIELDS.amount)
      .value(amounts ? e.amount : null)
      .raw(V2_EVENT_FIELDS.hash)
      .value(e.hash)
      .byte(CLOSE_RECORD);
  }
  return out.byte(CLOSE).take();
}

/** A page of v1 events as JSON, as v2EventsJson's. */
export function v1EventsJson(events: readonly V1EventRow[], spell?: AddressJson): Uint8Array<ArrayBuffer> {
  const out = eventsJson.reset().byte(OPEN);
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!;
    eventHeadJson(e, i, out).raw(V1_EVENT_FIELDS.vault);
    addressJson(e.vault, out, spell).raw(V1_EVENT_FIELDS.delegate);
    addressJson(e.delegate, out, spell).raw(V1_EVENT_FIELDS.contract);
    addressJson(e.contract, out, spell)
      .raw(V1_EVENT_FIELDS.tokenId)
      .value(e.tokenId)
      .raw(V1_EVENT_FIELDS.value)
      .value(e.value)
      .raw(V1_EVENT_FIELDS.revokedDelegate);
    addressJson(e.revokedDelegate, out, spell).byte(CLOSE_RECORD);
  }
  return out.byte(CLOSE).take();
}

/** The writer of event pages, reused: a page is written and taken in one go. */
const eventsJson = new JsonBytes();
const [OPEN, CLOSE, CLOSE_RECORD] = [..."[]}"].map((c) => c.charCodeAt(0)) as [number, number, number];

/** Each field's name as written before its value: `,"name":` (the first, `{"name":`). */
const fieldsJson = <F extends string>(names: readonly F[], first: boolean) =>
  Object.fromEntries(
    names.map((name, i) => [name, asciiBytes(`${i === 0 && first ? "{" : ","}${JSON.stringify(name)}:`)]),
  ) as Record<F, Uint8Array>;
const HEAD_FIELDS = fieldsJson(["blockNumber", "blockTimestamp", "transactionHash", "logIndex", "event"], true);
const V2_EVENT_FIELDS = fieldsJson(
  ["delegationType", "from", "to", "contract", "tokenId", "rights", "enable", "amount", "hash"],
  false,
);
const V1_EVENT_FIELDS = fieldsJson(["vault", "delegate", "contract", "tokenId", "value", "revokedDelegate"], false);

/** `address` (or null) as a JSON string in EIP-55 case: spelt by `spell` where it can, else checksummed. */
function addressJson(address: string | null, out: JsonBytes, spell: AddressJson | undefined): JsonBytes {
  if (address === null) return out.value(null);
  return spell?.(address, out) ? out : out.string(checksumAddress(address));
}

/** eventHead's fields of the `index`th record, after the comma before it. */
function eventHeadJson(e: V2EventRow | V1EventRow, index: number, out: JsonBytes): JsonBytes {
  if (index > 0) out.byte(COMMA);
  return out
    .raw(HEAD_FIELDS.blockNumber)
    .value(e.blockNumber)
    .raw(HEAD_FIELDS.blockTimestamp)
    .value(e.blockTimestamp)
    .raw(HEAD_FIELDS.transactionHash)
    .value(e.transactionHash)
    .raw(HEAD_FIELDS.logIndex)
    .value(e.logIndex)
    .raw(HEAD_FIELDS.event)
    .value(e.kind);
}
const COMMA = ",".charCodeAt(0);

/** A vault the hot wallet may act for; for erc20 and erc1155 checks, with the amount the check answers. */
export const v2VaultRecord = ({ vault, answer }: V2Vault) =>
  answer === true ? { vault: checksumAddress(vault) } : { vault: checksumAddress(vault), amount: answer };

/** A vault the delegate may act for. */
export const v1VaultRecord = (vault: Address) => ({ vault: checksumAddress(vault) });
