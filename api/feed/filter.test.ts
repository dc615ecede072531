import { describe, expect, it } from "vitest";
import { toJson } from "../http/json";
import { Params } from "../http/params";
import { Problem } from "../http/problem";
import { v1EventRecord, v2EventRecord } from "../routes/records";
import type { V1EventRow, V2EventRow } from "../store/history-store";
import { feedFilterOf, passes, subjectOf } from "./filter";

const A = "0x000000000000000000000000000000000000000a";
const B = "0x000000000000000000000000000000000000000b";
const C = "0x000000000000000000000000000000000000000c";
const RIGHTS = `0x${"0".repeat(63)}1`;
const head = {
  blockNumber: 5n,
  blockHash: `0x${"1".repeat(64)}`,
  blockTimestamp: 1n,
  transactionHash: `0x${"2".repeat(64)}`,
  logIndex: 0,
} as const;

/** A v2 ERC721 delegation from A to B on contract C with rights, and a v1 RevokeDelegate of B by A. */
const V2 = toJson(
  v2EventRecord({
    ...head,
    kind: "DelegateERC721",
    from: A,
    to: B,
    contract: C,
    tokenId: 7n,
    rights: RIGHTS,
    enable: true,
    amount: null,
    hash: `0x${"3".repeat(64)}`,
  } as V2EventRow),
);
const V1 = toJson(
  v1EventRecord({
    ...head,
    kind: "RevokeDelegate",
    vault: A,
    delegate: null,
    contract: null,
    tokenId: null,
    value: null,
    revokedDelegate: B,
  } as unknown as V1EventRow),
);

const filterOf = (query: string) => feedFilterOf(Params.ofUrl(`/registry/feed?${query}`), [1, 10]);
const lets = (query: string) => [
  passes(filterOf(query), { chainId: 1, version: "v2" }, subjectOf("v2", V2)),
  passes(filterOf(query), { chainId: 10, version: "v1" }, subjectOf("v1", V1)),
];

describe("the feed's filters", () => {
  it("read what the history's records say: sides, contract, rights and kinds", () => {
    expect(subjectOf("v2", V2)).toEqual({
      from: A,
      to: [B],
      contract: C,
      rights: RIGHTS,
      types: ["DelegateERC721", "ERC721"],
    });
    expect(subjectOf("v1", V1)).toEqual({ from: A, to: [B], contract: null, rights: null, types: ["RevokeDelegate"] });
  });

  it("let through each entry that every filter given lets through", () => {
    expect(lets("")).toEqual([true, true]);
    expect(lets("chainId=10")).toEqual([false, true]);
    expect(lets("chainId=1,10")).toEqual([true, true]);
    expect(lets("version=v2")).toEqual([true, false]);
    expect(lets(`wallet=${B.toUpperCase().replace("0X", "0x")}`)).toEqual([true, true]);
    expect(lets(`wallet=${B}&role=delegate`)).toEqual([true, true]);
    expect(lets(`wallet=${B}&role=from`)).toEqual([false, false]);
    expect(lets(`wallet=${A}&role=vault`)).toEqual([true, true]);
    expect(lets(`wallet=${A}&role=to`)).toEqual([false, false]);
    expect(lets(`contract=${C}`)).toEqual([true, false]);
    expect(lets(`rights=${RIGHTS}`)).toEqual([true, false]);
    expect(lets("rights=")).toEqual([false, false]);
    expect(lets("type=ERC721")).toEqual([true, false]);
    expect(lets("type=DelegateAll,RevokeDelegate")).toEqual([false, true]);
    expect(lets(`type=ERC721&wallet=${C}`)).toEqual([false, false]);
  });

  it("refuse what they cannot read, naming the parameter", () => {
    const cases: [string, string, string][] = [
      ["chainId=5", "unsupported_chain", "chainId"],
      ["chainId=1,1", "invalid_parameter", "chainId"],
      ["version=v3", "invalid_parameter", "version"],
      ["wallet=0x1", "invalid_parameter", "wallet"],
      ["role=either", "missing_parameter", "wallet"],
      [`wallet=${A}&role=both`, "invalid_parameter", "role"],
      ["type=ERC721,", "invalid_parameter", "type"],
    ];
    for (const [query, code, param] of cases) {
      const error = (() => {
        try {
          filterOf(query);
        } catch (e) {
          return e;
        }
      })();
      expect(error, query).toBeInstanceOf(Problem);
      expect([(error as Problem).code, (error as Problem).extra.param], query).toEqual([code, param]);
    }
  });
});
