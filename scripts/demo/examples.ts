/**
 * The requests the demo prints, each with the answer the service gives: worked out from the demo's
 * own writes (the model), on wallets the live activity never touches, so the answers hold as long
 * as the demo runs.
 */
import { type Address, getAddress, zeroHash } from "viem";
import type { RegistryCall } from "../../devkit/v1/calls";
import type { Write } from "../../devkit/v2/generate";
import type { DemoTx } from "./activity";
import { WHALES } from "./activity";
import type { DemoModel, V2Entry } from "./model";

export type Example = {
  what: string;
  path: string;
  /** The answer is a list, printed by its length (`| jq length`). */
  length?: true;
  answer: string;
  /** The wallets the answer depends on. */
  wallets: Address[];
};

const CHAIN = "chainId=31337";

function found<T>(what: string, value: T | undefined): T {
  if (value === undefined) throw new Error(`the demo's activity has no ${what}`);
  return value;
}

/** The v2 delegations written with `fn`, typed as such. */
function written<F extends Write["fn"]>(model: DemoModel, fn: F): (V2Entry & { write: Extract<Write, { fn: F }> })[] {
  return model.v2Delegations().filter((e): e is V2Entry & { write: Extract<Write, { fn: F }> } => e.write.fn === fn);
}

/** `history`: every transaction the model was given, in order. */
export function chooseExamples(model: DemoModel, history: DemoTx[]): Example[] {
  const all = found(
    "v2 ALL delegation in force",
    written(model, "delegateAll").find((e) => e.write.rights === zeroHash && e.value > 0n),
  );
  const erc20 = found(
    "v2 ERC20 delegation alone on its pair",
    written(model, "delegateERC20").find(
      (e) =>
        e.write.rights === zeroHash && e.value > 0n && !model.v2CheckContract(e.write.to, e.from, e.write.contract),
    ),
  );
  const revoked = found(
    "revoked v2 ERC721 delegation",
    written(model, "delegateERC721").find(
      (e) =>
        e.write.rights === zeroHash &&
        e.everEnabled &&
        !model.v2CheckErc721(e.write.to, e.from, e.write.contract, e.write.tokenId),
    ),
  );
  const contractLevel = found(
    "v1 contract delegation in force",
    model.v1InForce().find((key) => key.type === "CONTRACT"),
  );
  const v1 = history.filter((tx): tx is Extract<DemoTx, { v1: unknown }> => "v1" in tx);
  const afterRevokeAll = found(
    "v1 delegation voided by revokeAllDelegates",
    v1.find(
      (tx, i): tx is { from: Address; v1: Extract<RegistryCall, { fn: "delegateForAll" }> } =>
        tx.v1.fn === "delegateForAll" &&
        v1.slice(i).some((later) => later.from === tx.from && later.v1.fn === "revokeAllDelegates") &&
        !model.v1Check(tx.v1.delegate, tx.from),
    ),
  );
  const [e20, e721] = [erc20.write, revoked.write];
  const a = getAddress;
  return [
    {
      what: "v2: may the hot wallet act for the vault, for everything?",
      path: `/registry/v2/check/all?${CHAIN}&to=${a(all.write.to)}&from=${a(all.from)}`,
      answer: String(model.v2CheckAll(all.write.to, all.from)),
      wallets: [all.write.to, all.from],
    },
    {
      what: "v2: how much of an ERC20 token is delegated (an exact integer, in its smallest unit)",
      path: `/registry/v2/check/erc20?${CHAIN}&to=${a(e20.to)}&from=${a(erc20.from)}&contract=${a(e20.contract)}`,
      answer: String(model.v2CheckErc20(e20.to, erc20.from, e20.contract)),
      wallets: [e20.to, erc20.from],
    },
    {
      what: "v2: an NFT delegation that was revoked",
      path:
        `/registry/v2/check/erc721?${CHAIN}&to=${a(e721.to)}&from=${a(revoked.from)}&contract=` +
        `${a(e721.contract)}&tokenId=${e721.tokenId}`,
      answer: String(model.v2CheckErc721(e721.to, revoked.from, e721.contract, e721.tokenId)),
      wallets: [e721.to, revoked.from],
    },
    {
      what: "v2: every delegation of a guild that lends hundreds of NFTs",
      path: `/registry/v2/${a(WHALES.guild)}?${CHAIN}`,
      length: true,
      answer: String(model.v2ListingLength(WHALES.guild)),
      wallets: [WHALES.guild],
    },
    {
      what: "v1: a token check, answered by a delegation for the whole collection",
      path:
        `/registry/v1/check/token?${CHAIN}&delegate=${a(contractLevel.delegate)}&vault=` +
        `${a(contractLevel.vault)}&contract=${a(contractLevel.contract)}&tokenId=42`,
      answer: String(model.v1Check(contractLevel.delegate, contractLevel.vault, contractLevel.contract, 42n)),
      wallets: [contractLevel.delegate, contractLevel.vault],
    },
    {
      what: "v1: a delegation the vault voided with revokeAllDelegates",
      path: `/registry/v1/check/all?${CHAIN}&delegate=${a(afterRevokeAll.v1.delegate)}&vault=${a(afterRevokeAll.from)}`,
      answer: String(model.v1Check(afterRevokeAll.v1.delegate, afterRevokeAll.from)),
      wallets: [afterRevokeAll.v1.delegate, afterRevokeAll.from],
    },
    {
      what: "v1: the delegations in force of a vault with many",
      path: `/registry/v1/${a(WHALES.v1Vault)}?${CHAIN}`,
      length: true,
      answer: String(model.v1ListingLength(WHALES.v1Vault)),
      wallets: [WHALES.v1Vault],
    },
    // The demo configures one chain, its own.
    { what: "the chains this service indexes", path: "/registry/chains", length: true, answer: "1", wallets: [] },
  ];
}

/** The block the demo prints: each request ready to paste, with its answer. */
export function examplesText(baseUrl: string, examples: Example[]): string {
  const lines = ["", "Try these (answers as of now):"];
  for (const e of examples) {
    lines.push(
      "",
      `  # ${e.what}`,
      `  curl -s '${baseUrl}${e.path}'${e.length ? " | jq length" : ""}`,
      `  # → ${e.answer}`,
    );
  }
  return `${lines.join("\n")}\n\n`;
}

/** The start of the snippet's block, as the demo prints it. */
export const SNIPPET_HEADING = "From TypeScript, with the typed client (client/; docs/api.md, Typed client)";

/**
 * The example's question asked with the typed client: a file to save in this repository and run
 * with `npx tsx`; it prints what the curl prints.
 */
export function clientSnippet(baseUrl: string, e: Example): string {
  const url = new URL(e.path, baseUrl);
  const query = Object.entries(Object.fromEntries(url.searchParams))
    .map(([name, value]) => `${name}: "${value}"`)
    .join(", ");
  const lines = [
    `${SNIPPET_HEADING}; save it here as try.ts, run npx tsx try.ts:`,
    "",
    'import { createLookupClient } from "./client";',
    `const api = createLookupClient("${url.origin}");`,
    `const { data, error } = await api.GET("${url.pathname}", { params: { query: { ${query} } } });`,
    `console.log(data ?? error); // → ${e.answer}`,
  ];
  return `${lines.map((line) => (line === "" ? line : `  ${line}`)).join("\n")}\n\n`;
}
