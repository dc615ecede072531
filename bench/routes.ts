/**
 * What each load run asks, and what each answer must be: the API's check routes over many seeded
 * wallets (most checks built from a seeded delegation, some from wallets that never delegated to
 * each other), the listings of the hot wallets, and the baselines' requests.
 */
import { type Address, encodeFunctionData, zeroHash } from "viem";
import { toJson } from "../api/json";
import { registryV2Abi } from "../core/abi/registryV2";
import { type V1CheckQuery, v1CheckKeys } from "../core/v1";
import { type V2CheckQuery, v2Check } from "../core/v2";
import { Rng } from "../devkit/random";
import { type Dataset, TOKEN_IDS, type V1CheckKind, type V2CheckKind } from "./dataset";
import type { LoadRequest } from "./load";

export type Route = {
  label: string;
  requests: LoadRequest[];
  /** Why the answer to request `i` is wrong; undefined when it is right. */
  wrong(i: number, status: number, body: string): string | undefined;
  /** Checks: whether request `i` must be answered true or non-zero (a run of only misses measures little). */
  positive?(i: number): boolean;
};

const exactly = (expected: string) => (status: number, body: string) =>
  status === 200 && body === expected ? undefined : `expected 200 ${expected}, got ${status} ${body.slice(0, 200)}`;

/** Checks that miss: wallets of the pool that never delegated to each other, most likely. */
const MISS_SHARE = 0.25;

function checkRoute<Q>(
  label: string,
  hits: readonly Q[],
  miss: () => Q,
  path: (q: Q) => string,
  answer: (q: Q) => string,
  rng: Rng,
): Route {
  const queries = rng.shuffle([
    ...hits,
    ...Array.from({ length: Math.round((hits.length * MISS_SHARE) / (1 - MISS_SHARE)) }, miss),
  ]);
  return {
    label,
    requests: queries.map((q) => ({ method: "GET", path: path(q) })),
    wrong: (i, status, body) => exactly(answer(queries[i]!))(status, body),
    positive: (i) => !["false", "0"].includes(answer(queries[i]!)),
  };
}

const query = (params: Record<string, string | bigint | undefined>) =>
  Object.entries(params)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${v}`)
    .join("&");

const rightsParam = (rights: V2CheckQuery["rights"]) => (rights === zeroHash ? undefined : rights);

/** A v2 check route: seeded queries of `kind`, each with the answer the dataset implies. */
export function v2CheckRoute(data: Dataset, kind: V2CheckKind, rng: Rng): Route {
  const miss = (): V2CheckQuery => ({
    kind,
    from: rng.pick(data.wallets),
    to: rng.pick(data.wallets),
    rights: zeroHash,
    contract: kind === "all" ? undefined : rng.pick(data.contracts),
    tokenId: kind === "erc721" || kind === "erc1155" ? BigInt(rng.int(TOKEN_IDS)) : undefined,
  });
  return checkRoute(
    `v2 check ${kind}`,
    data.v2Samples.get(kind)!.items,
    miss,
    (q) => {
      const { to, from, contract, tokenId } = q;
      const params = { chainId: String(data.chainId), to, from, contract, tokenId, rights: rightsParam(q.rights) };
      return `/registry/v2/check/${kind}?${query(params)}`;
    },
    (q) => toJson(v2Check(q).answer(data.v2Enabled)),
    rng,
  );
}

/** A v1 check route: seeded queries of `kind`, each with the answer the dataset implies. */
export function v1CheckRoute(data: Dataset, kind: V1CheckKind, rng: Rng): Route {
  const miss = (): V1CheckQuery => ({
    kind,
    vault: rng.pick(data.wallets),
    delegate: rng.pick(data.wallets),
    contract: kind === "all" ? undefined : rng.pick(data.contracts),
    tokenId: kind === "token" ? BigInt(rng.int(TOKEN_IDS)) : undefined,
  });
  return checkRoute(
    `v1 check ${kind}`,
    data.v1Samples.get(kind)!.items,
    miss,
    (q) => {
      const { delegate, vault, contract, tokenId } = q;
      const params = { chainId: String(data.chainId), delegate, vault, contract, tokenId };
      return `/registry/v1/check/${kind}?${query(params)}`;
    },
    (q) => toJson(v1CheckKeys(q).some(data.v1InForce)),
    rng,
  );
}

/** Every check route of both registries, over the seeded state as it is now. */
export function checkRoutes(data: Dataset, seed: number): Route[] {
  const rng = new Rng(seed);
  return [
    ...(["all", "contract", "erc721", "erc20", "erc1155"] as const).map((kind) => v2CheckRoute(data, kind, rng)),
    ...(["all", "contract", "token"] as const).map((kind) => v1CheckRoute(data, kind, rng)),
  ];
}

/** The listings of the hot wallets of one size: exactly their delegations, each naming the wallet. */
export function listingRoute(data: Dataset, version: "v1" | "v2", size: number): Route {
  const wallets = [...data.hot[version]].filter(([, n]) => n === size).map(([wallet]) => wallet);
  const parties = version === "v2" ? ["from", "to"] : ["vault", "delegate"];
  return {
    label: `${version} listing, ${size.toLocaleString("en")}-delegation wallet`,
    requests: wallets.map((wallet) => ({
      method: "GET",
      path: `/registry/${version}/${wallet}?chainId=${data.chainId}`,
    })),
    wrong(i, status, body) {
      const wallet = wallets[i]!;
      if (status !== 200) return `expected 200, got ${status} ${body.slice(0, 200)}`;
      const records = JSON.parse(body) as Record<string, string>[];
      if (records.length !== size) return `expected ${size} records, got ${records.length}`;
      const stranger = records.find((r) => !parties.some((p) => r[p]?.toLowerCase() === wallet));
      return stranger && `a record that does not name ${wallet}: ${JSON.stringify(stranger)}`;
    },
  };
}

/** (a) The raw node:http hello: the ceiling of any node:http server here. */
export const helloRoute: Route = {
  label: "(a) raw node:http hello",
  requests: [{ method: "GET", path: "/" }],
  wrong: (_i, status, body) => exactly("hello")(status, body),
};

/**
 * (b) What a user does instead of asking the API: anvil's eth_call of checkDelegateForAll, for the
 * same wallets as the v2 all route. The chain holds none of the seeded delegations (they went into
 * the database directly): every answer is false.
 */
export function ethCallRoute(registry: Address, checks: Route): Route {
  const requests = checks.requests.map((r): LoadRequest => {
    const params = new URLSearchParams(r.path.split("?")[1]);
    const args = [
      params.get("to") as Address,
      params.get("from") as Address,
      (params.get("rights") ?? zeroHash) as `0x${string}`,
    ] as const;
    const data = encodeFunctionData({ abi: registryV2Abi, functionName: "checkDelegateForAll", args });
    return {
      method: "POST",
      path: "/",
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_call", params: [{ to: registry, data }, "latest"] }),
    };
  });
  return {
    label: "(b) anvil eth_call checkDelegateForAll",
    requests,
    wrong: (_i, status, body) =>
      status === 200 && (JSON.parse(body) as { result?: string }).result === zeroHash
        ? undefined
        : `expected the result ${zeroHash}, got ${status} ${body.slice(0, 200)}`,
  };
}
