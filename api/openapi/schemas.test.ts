/**
 * The components' schemas against what the API really writes: rows through the record functions
 * and api/http/json.ts, and whole answers of the app (checks, batches, listings, history, chains,
 * problems, the admin endpoints over a real key store), each validated by ajv's 2020-12 dialect.
 * Then a wrong version of each, so that no schema is vacuous.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020";
import type { Address, Hex } from "viem";
import { encodeFunctionData, maxUint256, zeroAddress, zeroHash } from "viem";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { registryV2Abi } from "../../core/abi/registryV2";
import { chainById, V1_ADDRESS, V2_ADDRESS } from "../../core/chains";
import { checksumAddress } from "../../core/keccak";
import { v2DelegationHash } from "../../core/v2";
import { type KeyStore, openKeyStore } from "../access/keys";
import type { Access } from "../access/open";
import { createApp } from "../app";
import type { AccessDb } from "../database/db";
import { pgliteAccessDb } from "../database/pglite";
import type { ChangeLog, FeedEntry } from "../feed/log";
import { type ClientErrorCode, clientErrorResponse } from "../http/client-error";
import { toJson } from "../http/json";
import { type ProblemCode, problemBody } from "../http/problem";
import { WEBHOOKS_PER_KEY } from "../limits";
import { v1EventRecord, v1Record, v2EventRecord, v2Record } from "../routes/records";
import type { HistoryStore, V1EventRow, V2EventRow } from "../store/history-store";
import type { ServedChain } from "../store/served-chains";
import { servedChain } from "../store/served-chains";
import type { ChainPosition, Store, V1Row, V2Row } from "../store/store";
import { type ChainAlarms, NO_ALARMS } from "../watch/chain-alarms";
import { TEST_BODY } from "../webhooks/admin";
import { deliveryBody } from "../webhooks/deliverer";
import { openWebhookStore, type WebhookAdmin } from "../webhooks/store";
import { FORMATS, type JsonSchema, schemas } from "./schemas";

type Component = keyof typeof schemas;
const COMPONENTS = Object.keys(schemas) as Component[];

// Strict: a misspelt keyword fails to compile instead of being ignored. Union types ("string", "null")
// are what OpenAPI 3.1 writes for nullable fields. The formats are the schemas' own (ajv bundles none).
const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true, formats: FORMATS });
// The document's own layout, so that `#/components/schemas/<Name>` resolves as it will in the document.
ajv.addKeyword("components");
ajv.addSchema({ $id: "openapi", components: { schemas } });

function validator(name: Component) {
  const validate = ajv.getSchema(`openapi#/components/schemas/${name}`);
  if (validate === undefined) throw new Error(`no schema ${name}`);
  return validate;
}

/** The schema's errors for `value`; [] when it validates. */
function errors(name: Component, value: unknown) {
  const validate = validator(name);
  return validate(value) ? [] : (validate.errors ?? ["invalid"]);
}

/** As a client reads it: written by the API's own toJson, parsed back. */
const wire = (value: unknown): unknown => JSON.parse(toJson(value));

// Rows as the store hands them: addresses and hex lowercase (Ponder's hex columns), integers as bigints.
const FROM = "0x5b38da6a701c568545dcfcb03fcb875f56beddc4" as Address;
const TO = "0xab8483f64d9c6d1ecf9b849ae677dd3315835cb2" as Address;
const CONTRACT = "0x4b20993bc481177ec7e8f571cecae8a9e22c02db" as Address;
const RIGHTS = `0x${"61".repeat(4)}${"0".repeat(56)}` as Hex;
const TX = `0x${"ab12".repeat(16)}` as Hex;
/** checkDelegateForAll(TO, FROM, 0) as calldata, for the JSON-RPC samples. */
const ALL_CALLDATA = encodeFunctionData({
  abi: registryV2Abi,
  functionName: "checkDelegateForAll",
  args: [TO, FROM, zeroHash],
});

const V2_ROWS: V2Row[] = (
  [
    { delegationType: "ALL", from: FROM, to: TO, contract: null, tokenId: null, rights: zeroHash, amount: null },
    { delegationType: "CONTRACT", from: FROM, to: TO, contract: CONTRACT, tokenId: null, rights: RIGHTS, amount: null },
    {
      delegationType: "ERC721",
      from: TO,
      to: FROM,
      contract: CONTRACT,
      tokenId: maxUint256,
      rights: zeroHash,
      amount: null,
    },
    {
      delegationType: "ERC20",
      from: FROM,
      to: FROM,
      contract: CONTRACT,
      tokenId: null,
      rights: zeroHash,
      amount: maxUint256,
    },
    { delegationType: "ERC1155", from: FROM, to: TO, contract: CONTRACT, tokenId: 0n, rights: RIGHTS, amount: 1n },
  ] satisfies Omit<V2Row, "hash">[]
).map((row) => ({
  ...row,
  hash: v2DelegationHash({
    ...row,
    type: row.delegationType,
    contract: row.contract ?? undefined,
    tokenId: row.tokenId ?? undefined,
  }),
}));

const V1_ROWS: V1Row[] = [
  { type: "ALL", vault: FROM, delegate: TO, contract: zeroAddress, tokenId: 0n },
  { type: "CONTRACT", vault: FROM, delegate: TO, contract: CONTRACT, tokenId: 0n },
  { type: "TOKEN", vault: TO, delegate: FROM, contract: CONTRACT, tokenId: maxUint256 },
];

const at = { blockNumber: 2n ** 62n, blockHash: zeroHash, blockTimestamp: 1_700_000_000n, transactionHash: TX };
const v2Event = (kind: string, logIndex: number, fields: Partial<V2EventRow>): V2EventRow => ({
  ...at,
  hash: `0x${logIndex.toString(16).padStart(64, "0")}`,
  logIndex,
  kind,
  from: FROM,
  to: TO,
  contract: CONTRACT,
  tokenId: null,
  rights: zeroHash,
  amount: null,
  enable: null,
  ...fields,
});
// As src/RegistryV2.ts writes them: `enable` for the enable events, `amount` for ERC20 and ERC1155.
const V2_EVENTS: V2EventRow[] = [
  v2Event("DelegateAll", 0, { contract: null, enable: true }),
  v2Event("DelegateContract", 1, { rights: RIGHTS, enable: false }),
  v2Event("DelegateERC721", 2, { tokenId: 7n, enable: true }),
  v2Event("DelegateERC20", 3, { amount: 0n }),
  v2Event("DelegateERC1155", 4, { tokenId: maxUint256, amount: maxUint256 }),
];

const v1Event = (kind: string, logIndex: number, fields: Partial<V1EventRow>): V1EventRow => ({
  ...at,
  logIndex,
  kind,
  vault: FROM,
  delegate: TO,
  contract: null,
  tokenId: null,
  value: null,
  revokedDelegate: null,
  ...fields,
});
// As src/RegistryV1.ts writes them: the revokes carry no value; RevokeDelegate names the revoked delegate.
const V1_EVENTS: V1EventRow[] = [
  v1Event("DelegateForAll", 0, { value: true }),
  v1Event("DelegateForContract", 1, { contract: CONTRACT, value: false }),
  v1Event("DelegateForToken", 2, { contract: CONTRACT, tokenId: maxUint256, value: true }),
  v1Event("RevokeAllDelegates", 3, { delegate: null }),
  v1Event("RevokeDelegate", 4, { delegate: FROM, revokedDelegate: TO }),
];

/** Chains from the chain table, as `npm start` serves them (startBlock null: not known yet). */
const registry = (address: Address, startBlock: number | null) => ({ address, startBlock });
const CHAINS: ServedChain[] = [
  servedChain(chainById(1)!, { v1: registry(V1_ADDRESS, 15_000_000), v2: registry(V2_ADDRESS, 17_000_000) }),
  servedChain(chainById(10)!, { v1: registry(V1_ADDRESS, null), v2: registry(V2_ADDRESS, 100) }),
  servedChain(chainById(324)!, { v2: registry(V2_ADDRESS, null) }),
  servedChain(chainById(8453)!, { v1: registry(V1_ADDRESS, 0), v2: registry(V2_ADDRESS, 0) }),
];
const NOW = Math.floor(Date.now() / 1000);
/** Chain 1 live, 10 behind, 324 not indexed yet (syncing), 8453 still backfilling but alarmed. */
const POSITIONS = new Map<number, ChainPosition>([
  [1, { indexedBlock: 7n, ready: true, indexedTimestamp: NOW }],
  [10, { indexedBlock: 2n ** 40n, ready: true, indexedTimestamp: NOW - 3_600 }],
  [8453, { indexedBlock: 0n, ready: false, indexedTimestamp: NOW - 60 }],
]);
const ALARMS: ChainAlarms = {
  ...NO_ALARMS,
  current: () => new Map([[8453, "a reorganization deeper than finality was found; re-index the chain"]]),
};

/** A store whose enabled v2 delegations (by hash: the amount) and v1 delegations in force are the ones given. */
function storeOf(v2Amount: (hash: Hex) => bigint | undefined, v1All: boolean): Store {
  const view = <T>(data: T) => ({ indexedBlock: 7n, ready: true, data });
  return {
    v2Enabled: async (_, hashes) =>
      view(
        new Map(
          hashes.flatMap((hash) => {
            const amount = v2Amount(hash);
            return amount === undefined ? [] : [[hash, { enabled: true, amount }]];
          }),
        ),
      ),
    v1InForce: async (_, keys) => view(v1All ? keys.map((k) => ({ ...k })) : []),
    // No copy: answers at past blocks are the history's.
    v2EnabledAt: async () => undefined,
    v1InForceAt: async () => undefined,
    v2Wallet: async () => view(V2_ROWS),
    v2Wallets: async (_, wallets) => view(wallets.map(() => V2_ROWS)),
    v2Delegation: async (_, hash) => view(V2_ROWS.find((row) => row.hash === hash)),
    v1Wallet: async () => view(V1_ROWS),
    v1Wallets: async (_, wallets) => view(wallets.map(() => V1_ROWS)),
    chainStates: async () => POSITIONS,
  };
}
const NOTHING = storeOf(() => undefined, false);

const withPosition = <T extends { blockNumber: bigint; logIndex: number }>(items: T[]) => ({
  items: items.map((item) => ({ ...item, position: { block: item.blockNumber, logIndex: item.logIndex } })),
  more: true,
});
/** History pages only (and no tables ahead of the copy): the rest of the HistoryStore is not asked here. */
const HISTORY = {
  indexedBlock: async () => undefined,
  v2Events: async () => withPosition(V2_EVENTS),
  v1Events: async () => withPosition(V1_EVENTS),
} as unknown as HistoryStore;

/** Keyless requests let through (or refused, `allowed: false`); keys from `keys`. */
function access(keys: KeyStore | undefined, allowed = true): Access {
  return {
    keys: keys ?? ({ use: async () => false, useHeld: () => false, heldOnce: () => false } as unknown as KeyStore),
    limiter: {
      take: async () => ({ allowed, limit: 25, windowMs: 10_000, remaining: allowed ? 24 : 0, resetMs: 4_000 }),
      charge: async () => ({ allowed, limit: 25, windowMs: 10_000, remaining: allowed ? 24 : 0, resetMs: 4_000 }),
      close: async () => {},
    },
    trustProxy: false,
    // This process's own load must not shed the keyless requests asked here (a busy machine).
    load: { shed: () => false },
    adminToken: keys === undefined ? undefined : "admin-token",
    db: undefined as unknown as AccessDb,
    schema: "access",
    close: async () => {},
  };
}

/** The change log: every sample event (v2 and v1), then a retraction of the first. */
const FEED: FeedEntry[] = [
  ...[
    ...V2_EVENTS.map((e) => ["v2", e, v2EventRecord(e)] as const),
    ...V1_EVENTS.map((e) => ["v1", e, v1EventRecord(e)] as const),
  ].map(
    ([version, e, record], i): FeedEntry => ({
      seq: BigInt(i + 1),
      chainId: 1,
      version,
      block: e.blockNumber,
      blockHash: e.blockHash,
      logIndex: e.logIndex,
      record: toJson(record),
      retracts: null,
      createdAt: new Date(),
    }),
  ),
];
FEED.push({ ...FEED[0]!, seq: BigInt(FEED.length + 1), retracts: 1n });
const CHANGES = {
  entries: async (after: bigint, limit: number) => FEED.filter((e) => e.seq > after).slice(0, limit),
  pruned: async () => 0n,
  newest: async () => FEED.at(-1)!.seq,
} as unknown as ChangeLog;

function appOver(
  store: Store,
  options: { keys?: KeyStore; allowed?: boolean; pruned?: bigint; webhooks?: WebhookAdmin } = {},
) {
  const pruned = options.pruned ?? 0n;
  const app = createApp({
    webhooks: options.webhooks,
    changes: () => ({ ...CHANGES, pruned: async () => pruned }),
    store,
    history: HISTORY,
    chains: CHAINS,
    alarms: ALARMS,
    access: access(options.keys, options.allowed),
    behindAfterSeconds: 120,
  });
  /** What @hono/node-server hands the app: the client's socket, whose address the keyless limit counts. */
  const socket = { incoming: { socket: { remoteAddress: "127.0.0.1", remotePort: 50000, remoteFamily: "IPv4" } } };
  return async (path: string, init: RequestInit = {}, status = 200) => {
    const res = await app.request(path, init, socket);
    const text = await res.text();
    expect(res.status, `${init.method ?? "GET"} ${path}: ${text}`).toBe(status);
    return JSON.parse(text) as unknown;
  };
}

const post = (body: unknown, type = "application/json"): RequestInit => ({
  method: "POST",
  headers: { "Content-Type": type },
  body: typeof body === "string" ? body : JSON.stringify(body),
});

/** The real outputs, by component, gathered once. */
const samples = Object.fromEntries(COMPONENTS.map((name) => [name, [] as unknown[]])) as Record<Component, unknown[]>;
/** The problem codes the app itself was seen to answer with. */
const answered = new Set<string>();

let dir: string;
let db: AccessDb;
let keys: KeyStore;
let receiver: Server;

beforeAll(async () => {
  // The records and check answers, as the routes write them.
  samples.V2Delegation.push(...V2_ROWS.map((row) => wire(v2Record(row))));
  samples.V1Delegation.push(...V1_ROWS.map((row) => wire(v1Record(row))));
  samples.V2Event.push(...V2_EVENTS.map((row) => wire(v2EventRecord(row))));
  samples.V1Event.push(...V1_EVENTS.map((row) => wire(v1EventRecord(row))));

  // Chain 1: one ERC20 delegation of 1000 from FROM to TO on CONTRACT; or every hash enabled.
  const erc20 = v2DelegationHash({
    type: "ERC20",
    from: FROM,
    to: TO,
    rights: zeroHash,
    contract: CONTRACT,
  });
  const some = appOver(storeOf((hash) => (hash === erc20 ? 1000n : undefined), false));
  const all = appOver(storeOf(() => 5n, true));
  const v2 = `to=${TO}&from=${FROM}`;
  const v1 = `delegate=${TO}&vault=${FROM}`;
  const contract = `contract=${CONTRACT}`;
  const gets = [
    `v2/check/all?${v2}`,
    `v2/check/contract?${v2}&${contract}`,
    `v2/check/erc721?${v2}&${contract}&tokenId=1`,
    `v2/check/erc20?${v2}&${contract}&rights=airdrop`,
    `v2/check/erc20?${v2}&${contract}`,
    `v2/check/erc1155?${v2}&${contract}&tokenId=0x2`,
    `v1/check/all?${v1}`,
    `v1/check/contract?${v1}&${contract}`,
    `v1/check/token?${v1}&${contract}&tokenId=3`,
  ];
  const parties = { to: TO, from: FROM, contract: CONTRACT };
  const v2Checks = ["all", "contract", "erc721", "erc20", "erc1155"].map((type) => ({ type, ...parties, tokenId: 2 }));
  const v1Party = { vault: FROM, delegate: TO, contract: CONTRACT, tokenId: "0x1" };
  const v1Checks = ["all", "contract", "token"].map((type) => ({ type, ...v1Party }));
  for (const get of [some, all]) {
    for (const path of gets) {
      const answer = await get(`/registry/${path}`);
      samples[typeof answer === "boolean" ? "CheckBoolean" : "CheckAmount"].push(answer);
    }
    const calls = [
      { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] },
      { jsonrpc: "2.0", id: "b", method: "eth_call", params: [{ to: V2_ADDRESS, data: ALL_CALLDATA }, "latest"] },
      { jsonrpc: "2.0", id: null, method: "eth_call", params: [{ to: V2_ADDRESS, data: "0x01" }] },
      { jsonrpc: "2.0", method: "net_version" },
      { jsonrpc: "2.0", id: 5, method: "eth_sendTransaction", params: [] },
    ];
    samples.RpcRequest.push(...calls);
    samples.RpcBody.push(calls[0], calls);
    const reply = (await get("/rpc/1", post(calls))) as unknown[];
    samples.RpcReply.push(reply, await get("/rpc/1", post(calls[1])));
    samples.RpcAnswer.push(...reply);
    for (const answer of reply) samples["result" in (answer as object) ? "RpcResult" : "RpcFailure"].push(answer);
    samples.V2BatchAnswer.push(await get("/registry/v2/check", post({ chainId: 1, checks: v2Checks })));
    samples.V1BatchAnswer.push(await get("/registry/v1/check", post({ checks: v1Checks })));
  }
  // The amounts: 1000 for the ERC20 delegation, 2^256-1 (as a JSON number) where everything is enabled.
  expect(samples.CheckAmount).toEqual([1000, 1000, 0, Number(maxUint256), Number(maxUint256), Number(maxUint256)]);

  // Listings, history pages and the chains.
  samples.V2Delegations.push(await some(`/registry/v2/${FROM}?chainId=1`));
  samples.V1Delegations.push(await some(`/registry/v1/${FROM}`));
  samples.V2Events.push(await some(`/registry/v2/${FROM}/history?limit=5`));
  samples.V1Events.push(await some("/registry/v1/history?chainId=1"));
  const feed = (await some("/registry/feed/events?limit=1000")) as { entries: unknown[] };
  expect(feed.entries).toHaveLength(FEED.length);
  samples.FeedPage.push(feed, await some(`/registry/feed/events?cursor=${FEED.length}`));
  samples.FeedEntry.push(...feed.entries);
  // Vaults: FROM holds an ALL delegation to TO (v2 and v1).
  const vaults = await some(`/registry/v2/${TO}/vaults?chainId=1&type=all`);
  const amounts = await some(`/registry/v2/${TO}/vaults?chainId=1&type=erc1155&${contract}&tokenId=0&rights=airdrop`);
  const v1Vaults = await some(`/registry/v1/${TO}/vaults?type=token&${contract}&tokenId=1`);
  expect([vaults, amounts, v1Vaults]).toEqual([
    [{ vault: checksumAddress(FROM) }],
    [{ vault: checksumAddress(FROM), amount: Number(maxUint256) }],
    [{ vault: checksumAddress(FROM) }],
  ]);
  samples.Vaults.push(vaults, v1Vaults);
  samples.Vault.push(...(vaults as unknown[]));
  samples.VaultAmounts.push(amounts);
  samples.VaultAmount.push(...(amounts as unknown[]));
  samples.V2WalletListings.push(await some("/registry/v2/wallets", post({ chainId: 1, wallets: [FROM, TO] })));
  samples.V1WalletListings.push(await some("/registry/v1/wallets", post({ direction: "incoming", wallets: [TO] })));
  const chains = await some("/registry/chains");
  samples.Chains.push(chains);
  samples.Chain.push(...(chains as unknown[]));
  expect((chains as { status: string }[]).map((c) => c.status)).toEqual(["live", "behind", "syncing", "reorganized"]);

  // Problems the app answers, each with what it carries.
  const problem = (get: ReturnType<typeof appOver>, status: number, path: string, init: RequestInit = {}) =>
    get(path, init, status).then((body) => {
      answered.add((body as { code: string }).code);
      samples.Problem.push(body);
    });
  const check = `/registry/v2/check/all?to=${TO}&from=${FROM}`;
  await problem(some, 400, `${check}&chainId=999`);
  await problem(some, 400, `${check}&blockNumber=100`);
  await problem(some, 400, `${check}&to=${CONTRACT}`);
  await problem(some, 400, `/registry/v2/check/all?to=${TO}`);
  await problem(some, 400, `/registry/v2/check/erc721?delegate=${TO}&to=${CONTRACT}&from=${FROM}`);
  await problem(some, 400, `/registry/v2/history?cursor=nonsense`);
  await problem(some, 400, "/registry/v2/history?fromBlock=9");
  await problem(some, 400, "/registry/v2/check", post("{"));
  await problem(some, 400, "/registry/v2/check", post({ checks: [{ type: "all", to: 1 }] }));
  await problem(some, 415, "/registry/v2/check", post({ checks: [] }, "text/plain"));
  await problem(some, 413, "/registry/v1/check", post({ checks: Array(10_001).fill({ type: "all" }) }));
  await problem(some, 401, check, { headers: { "X-API-KEY": "dlk_nope" } });
  await problem(some, 404, "/nowhere");
  await problem(some, 404, "/admin/keys");
  await problem(
    appOver({ ...NOTHING, v2Delegation: async () => ({ indexedBlock: 7n, ready: true, data: undefined }) }),
    404,
    `/registry/v2/delegation/0x${"ab".repeat(32)}`,
  );
  await problem(some, 405, check, { method: "DELETE" });
  await problem(appOver(NOTHING, { pruned: 3n }), 410, "/registry/feed/events?cursor=2");
  await problem(some, 503, `${check}&chainId=8453`);
  await problem(appOver({ ...NOTHING, v2Enabled: async () => undefined }), 503, check);
  await problem(appOver(NOTHING, { allowed: false }), 429, check);
  const broken = { ...NOTHING, chainStates: () => Promise.reject(new Error("a bug")) };
  const quiet = vi.spyOn(console, "error").mockImplementation(() => {});
  await problem(appOver(broken), 500, "/registry/chains");
  quiet.mockRestore();

  // The admin endpoints, over a real key store.
  dir = mkdtempSync(join(tmpdir(), "openapi-schemas-"));
  db = await pgliteAccessDb(join(dir, "db"));
  keys = await openKeyStore(db, "access");
  const admin = appOver(NOTHING, { keys });
  const bearer = { Authorization: "Bearer admin-token", "Content-Type": "application/json" };
  await problem(admin, 401, "/admin/keys", { headers: { Authorization: "Bearer wrong" } });
  const created = (await admin(
    "/admin/keys",
    { method: "POST", headers: bearer, body: '{"label":" a dapp "}' },
    201,
  )) as {
    id: string;
  };
  samples.ApiKeyCreated.push(created);
  await admin("/admin/keys", { method: "POST", headers: bearer, body: '{"label":"another"}' }, 201);
  samples.ApiKeys.push(await admin("/admin/keys", { headers: bearer }));
  samples.ApiKeyRevoked.push(await admin(`/admin/keys/${created.id}`, { method: "DELETE", headers: bearer }));
  samples.ApiKeyRevoked.push(await admin(`/admin/keys/${created.id}`, { method: "DELETE", headers: bearer }));
  const listed = await admin("/admin/keys", { headers: bearer });
  samples.ApiKeys.push(listed);
  samples.ApiKey.push(...(listed as unknown[]));
  expect((listed as { revokedAt: string | null }[]).map((k) => k.revokedAt === null)).toEqual([false, true]);

  // The webhook endpoints, over a real store, delivering to a receiver on loopback.
  receiver = createServer((req, res) => req.resume().on("end", () => res.writeHead(204).end()));
  await new Promise<void>((ok) => receiver.listen(0, "127.0.0.1", ok));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const hooks = await openWebhookStore(db, "access");
  const webhooks = { store: hooks, log: () => CHANGES, served: [1], allowPrivate: true, timeoutMs: 2_000 };
  const managed = appOver(NOTHING, { keys, webhooks });
  const made = (await managed(
    "/admin/webhooks",
    { method: "POST", headers: bearer, body: JSON.stringify({ url, filter: "chainId=1&type=ERC721" }) },
    201,
  )) as { id: string };
  samples.WebhookCreated.push(made);
  await managed("/admin/webhooks", { method: "POST", headers: bearer, body: JSON.stringify({ url, cursor: 0 }) }, 201);
  samples.WebhookCreated.push(await managed(`/admin/webhooks/${made.id}/rotate`, { method: "POST", headers: bearer }));
  samples.Webhook.push(await managed(`/admin/webhooks/${made.id}/pause`, { method: "POST", headers: bearer }));
  samples.Webhook.push(await managed(`/admin/webhooks/${made.id}`, { headers: bearer }));
  samples.Webhooks.push(await managed("/admin/webhooks", { headers: bearer }));
  samples.WebhookAttempt.push(await managed(`/admin/webhooks/${made.id}/test`, { method: "POST", headers: bearer }));
  await hooks.settle(made as never, {
    retryAt: new Date(),
    pending: 3n,
    delivery: {
      id: "msg_x",
      webhookId: made.id,
      firstSeq: 1n,
      lastSeq: 3n,
      entries: 3,
      attempt: 1,
      status: null,
      error: "no answer in 2000 ms",
      ms: 2000,
    },
  });
  const deliveries = await managed(`/admin/webhooks/${made.id}/deliveries`, { headers: bearer });
  samples.WebhookDeliveries.push(deliveries);
  samples.WebhookDelivery.push(...(deliveries as unknown[]));
  samples.Webhook.push(await managed(`/admin/webhooks/${made.id}`, { method: "DELETE", headers: bearer }));
  // A key's own endpoints: listed with their owner; one more than a key may have is refused.
  const holder = { "X-API-KEY": (await keys.create("a key's holder")).key };
  for (let i = 0; i < WEBHOOKS_PER_KEY; i++) {
    const body = JSON.stringify({ url: `${url}/${i}` });
    samples.WebhookCreated.push(await managed("/developer/webhooks", { method: "POST", headers: holder, body }, 201));
  }
  samples.Webhooks.push(await managed("/developer/webhooks", { headers: holder }));
  await problem(managed, 409, "/developer/webhooks", {
    method: "POST",
    headers: holder,
    body: JSON.stringify({ url }),
  });
  // A delivery's body, as the deliverer writes it, and a test delivery's.
  samples.WebhookPayload.push(JSON.parse(deliveryBody(FEED.slice(0, 3))), JSON.parse(TEST_BODY));
}, 60_000);

afterAll(async () => {
  receiver?.close();
  await keys?.close();
  await db?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The fields an object may leave out: the Problem's extras, and what JSON-RPC leaves out. */
const OPTIONAL: Record<string, string[]> = {
  Problem: ["param", "chains", "indexedBlock"],
  RpcRequest: ["id", "params"],
  "RpcFailure.error": ["data"],
  WebhookPayload: ["test"],
};

describe("the components' schemas", () => {
  it("compile under the 2020-12 dialect, with every $ref naming a component", () => {
    const refs = JSON.stringify(schemas).matchAll(/"\$ref":"([^"]+)"/g);
    for (const [, target] of refs) expect(COMPONENTS.map((name) => `#/components/schemas/${name}`)).toContain(target);
    for (const name of COMPONENTS) expect(() => validator(name)).not.toThrow();
  });

  it("close every object and require all its fields (the Problem's extras aside), each described", () => {
    const visit = (schema: JsonSchema, where: string) => {
      if (schema.$ref === undefined) expect(schema.description, `${where} has a description`).toBeTypeOf("string");
      if (schema.properties !== undefined) {
        const fields = Object.keys(schema.properties as object);
        expect(schema.additionalProperties, where).toBe(false);
        // Fields JSON-RPC leaves out (an id of a notification, no params, an error without data).
        const optional = OPTIONAL[where] ?? [];
        expect([...(schema.required as string[]), ...optional].sort(), where).toEqual(fields.sort());
        for (const [field, sub] of Object.entries(schema.properties as Record<string, JsonSchema>))
          visit(sub, `${where}.${field}`);
      }
    };
    for (const name of COMPONENTS) visit(schemas[name], name);
  });

  it.each(COMPONENTS)("%s validates the API's real output", (name) => {
    expect(samples[name].length, `outputs gathered for ${name}`).toBeGreaterThan(0);
    for (const sample of samples[name]) expect(errors(name, sample), JSON.stringify(sample)).toEqual([]);
  });

  it("Problem validates the body of every code, with each extra field the API adds", () => {
    const codes = schemas.Problem.properties.code.enum as ProblemCode[];
    expect(codes.length).toBe(22);
    for (const code of codes) {
      for (const extra of [
        {},
        { param: "checks[17].to" },
        { param: "chainId", chains: [1, 10] },
        { indexedBlock: 7 },
      ]) {
        expect(errors("Problem", wire(problemBody(code, "what went wrong", extra))), code).toEqual([]);
      }
    }
    // The app answered these itself above (headers stripped, extras kept).
    expect([...answered].sort()).toEqual(
      codes.filter((code) => !["request_timeout", "malformed_request", "headers_too_large"].includes(code)).sort(),
    );
    expect(samples.Problem).toContainEqual(
      expect.objectContaining({ code: "unsupported_chain", chains: [1, 10, 324, 8453] }),
    );
    expect(samples.Problem).toContainEqual(expect.objectContaining({ code: "block_not_indexed", indexedBlock: 7 }));
  });

  it("Problem validates what answers Node's parser refusals (api/http/client-error.ts)", () => {
    const codes: ClientErrorCode[] = ["headers_too_large", "content_too_large", "request_timeout", "malformed_request"];
    for (const code of codes) {
      const body = JSON.parse(clientErrorResponse(code).split("\r\n\r\n")[1]!);
      expect(errors("Problem", body), code).toEqual([]);
    }
  });
});

/** A sample with `change` applied: `undefined` removes the field. */
function changed(name: Component, change: Record<string, unknown>, index = 0): Record<string, unknown> {
  const copy = { ...(samples[name][index] as Record<string, unknown>) };
  for (const [field, value] of Object.entries(change)) {
    if (value === undefined) delete copy[field];
    else copy[field] = value;
  }
  return copy;
}
const address39 = `0x${"a".repeat(39)}`;

describe("the components' schemas refuse", () => {
  const cases: [Component, string, () => unknown][] = [
    ["V2Delegation", "a missing field", () => changed("V2Delegation", { amount: undefined })],
    ["V2Delegation", "an extra field", () => changed("V2Delegation", { enabled: true })],
    ["V2Delegation", "a 39-digit address", () => changed("V2Delegation", { to: address39 })],
    ["V2Delegation", "uppercase rights", () => changed("V2Delegation", { rights: `0x${"AB".repeat(32)}` })],
    ["V2Delegation", "a tokenId as a string", () => changed("V2Delegation", { tokenId: "1" }, 2)],
    ["V2Delegation", "delegationType as the spec's type", () => changed("V2Delegation", { type: "ERC721" })],
    ["V2Delegations", "an item that is not a delegation", () => [samples.V2Delegation[0], samples.V1Delegation[0]]],
    ["V1Delegation", "a missing contract", () => changed("V1Delegation", { contract: undefined })],
    ["V1Delegation", "a negative tokenId", () => changed("V1Delegation", { tokenId: -1 }, 2)],
    ["V1Delegation", "an unknown type", () => changed("V1Delegation", { type: "ERC20" })],
    ["V1Delegations", "an object for the list", () => samples.V1Delegation[0]],
    ["V2Delegation", "an uppercase hash", () => changed("V2Delegation", { hash: `0x${"AB".repeat(32)}` })],
    ["V2Delegation", "a missing hash", () => changed("V2Delegation", { hash: undefined })],
    ["V2WalletListings", "a listing of v1 delegations", () => [[samples.V1Delegation[0]]]],
    ["V2WalletListings", "no listing", () => []],
    ["V1WalletListings", "a flat list of delegations", () => [samples.V1Delegation[0]]],
    ["Vault", "an amount beside", () => changed("Vault", { amount: 1 })],
    ["Vault", "a 39-digit vault", () => changed("Vault", { vault: address39 })],
    ["VaultAmount", "no amount", () => changed("VaultAmount", { amount: undefined })],
    ["VaultAmount", "an amount as a string", () => changed("VaultAmount", { amount: "5" })],
    ["Vaults", "an item with an amount", () => [samples.VaultAmount[0]]],
    ["VaultAmounts", "an item without an amount", () => [samples.Vault[0]]],
    ["V2Event", "a null enable", () => changed("V2Event", { enable: null })],
    ["V2Event", "a missing hash", () => changed("V2Event", { hash: undefined })],
    ["V2Event", "a v1 event name", () => changed("V2Event", { event: "DelegateForAll" })],
    ["V2Event", "a short transaction hash", () => changed("V2Event", { transactionHash: "0xab" })],
    ["V2Events", "an event missing its block", () => [changed("V2Event", { blockNumber: undefined })]],
    ["V1Event", "a value as a string", () => changed("V1Event", { value: "true" })],
    ["V1Event", "an extra field", () => changed("V1Event", { amount: null })],
    ["V1Event", "a 39-digit revokedDelegate", () => changed("V1Event", { revokedDelegate: address39 }, 4)],
    ["V1Events", "an item with a fractional logIndex", () => [changed("V1Event", { logIndex: 1.5 })]],
    ["FeedEntry", "a seq as a string", () => changed("FeedEntry", { seq: "1" })],
    ["FeedEntry", "an unknown version", () => changed("FeedEntry", { version: "v3" })],
    ["FeedEntry", "an event that is no event", () => changed("FeedEntry", { event: { blockNumber: 1 } })],
    ["FeedEntry", "a missing retracts", () => changed("FeedEntry", { retracts: undefined })],
    ["FeedPage", "no cursor", () => ({ entries: [] })],
    ["FeedPage", "an entry that is an event", () => ({ entries: [samples.V2Event[0]], cursor: 1 })],
    ["CheckBoolean", "the string 'true'", () => "true"],
    ["CheckBoolean", "1", () => 1],
    ["CheckAmount", "a negative amount", () => -1],
    ["CheckAmount", "an amount as a string", () => "1000"],
    ["CheckAmount", "a fraction", () => 0.5],
    ["V2BatchAnswer", "an empty batch", () => []],
    ["V2BatchAnswer", "a null answer", () => [true, null]],
    ["V1BatchAnswer", "an amount", () => [true, 1]],
    ["Chain", "an unknown status", () => changed("Chain", { status: "ok" })],
    ["Chain", "a negative lag", () => changed("Chain", { lagSeconds: -1 })],
    [
      "Chain",
      "a registry without startBlock",
      () => changed("Chain", { registries: { v1: null, v2: { address: V2_ADDRESS } } }),
    ],
    ["Chain", "a missing alarm", () => changed("Chain", { alarm: undefined })],
    ["Chains", "a chain with an extra field", () => [changed("Chain", { ready: true })]],
    ["Problem", "an unknown code", () => changed("Problem", { code: "teapot" })],
    ["Problem", "a missing detail", () => changed("Problem", { detail: undefined })],
    ["Problem", "the headers (never written)", () => changed("Problem", { headers: { "Retry-After": "1" } })],
    ["Problem", "a URL for type", () => changed("Problem", { type: "https://example.org/problem" })],
    ["Problem", "a 200 status", () => changed("Problem", { status: 200 })],
    ["ApiKeyCreated", "a missing key", () => changed("ApiKeyCreated", { key: undefined })],
    ["ApiKeyCreated", "a key not of the format", () => changed("ApiKeyCreated", { key: "dlk_short" })],
    ["ApiKeyCreated", "a blank label", () => changed("ApiKeyCreated", { label: "" })],
    ["ApiKey", "a missing recentRequests", () => changed("ApiKey", { recentRequests: undefined })],
    ["ApiKey", "a createdAt that is not a date-time", () => changed("ApiKey", { createdAt: "yesterday" })],
    ["ApiKeys", "a listed key with its secret", () => [{ ...changed("ApiKey", {}), key: "dlk_x" }]],
    ["WebhookCreated", "a missing secret", () => changed("WebhookCreated", { secret: undefined })],
    ["Webhook", "a listed endpoint with its secret", () => ({ ...changed("Webhook", {}), secret: "whsec_x" })],
    ["Webhook", "a cursor as text", () => changed("Webhook", { cursor: "1" })],
    ["Webhooks", "an endpoint without an id", () => [changed("Webhook", { id: undefined })]],
    ["WebhookDelivery", "a negative latency", () => changed("WebhookDelivery", { ms: -1 })],
    ["WebhookDeliveries", "a delivery without its status", () => [changed("WebhookDelivery", { status: undefined })]],
    ["WebhookAttempt", "a status as text", () => changed("WebhookAttempt", { status: "200" })],
    ["WebhookPayload", "101 entries", () => ({ entries: Array(101).fill(changed("FeedEntry", {})) })],
    ["WebhookPayload", "test: false", () => ({ entries: [], test: false })],
    ["RpcRequest", "no method", () => changed("RpcRequest", { method: undefined })],
    ["RpcRequest", "jsonrpc 1.0", () => changed("RpcRequest", { jsonrpc: "1.0" })],
    ["RpcBody", "an empty batch", () => []],
    ["RpcResult", "no id", () => changed("RpcResult", { id: undefined })],
    ["RpcFailure", "an error without a code", () => changed("RpcFailure", { error: { message: "x" } })],
    ["RpcAnswer", "a result and an error", () => ({ ...changed("RpcResult", {}), error: { code: 3, message: "x" } })],
    ["RpcReply", "a batch holding a request", () => [samples.RpcRequest[0]]],
    ["ApiKeyRevoked", "a null revokedAt", () => changed("ApiKeyRevoked", { revokedAt: null })],
    ["ApiKeyRevoked", "recentRequests (a listing's field)", () => changed("ApiKeyRevoked", { recentRequests: 0 })],
  ];

  it("at least one wrong value per component", () => {
    expect([...new Set(cases.map(([name]) => name))].sort()).toEqual([...COMPONENTS].sort());
  });

  it.each(cases)("%s: %s", (name, _, value) => {
    expect(errors(name, value())).not.toEqual([]);
  });
});
