/**
 * Differential testing of the v2 API against the real DelegateRegistry (../shared/oracle):
 * a seeded random write generator, a JSON-RPC client for sending those writes and for the
 * contract's own view functions, and the comparison of the service's answers with them.
 *
 * Nothing here uses the service's code to decide what is right, except `v2DelegationHash`, whose
 * results are themselves checked against the contract's hash lists.
 */
import {
  type Abi,
  type Address,
  decodeEventLog,
  encodeFunctionData,
  getAddress,
  type Hex,
  hexToBytes,
  keccak256,
  stringToHex,
  toHex,
} from "viem";
import { type V2DelegationType, v2DelegationHash } from "../../core/v2";
import {
  askService,
  canonical,
  chunks,
  ethCalls,
  type Mismatch,
  parseJsonExact,
  pool,
  type Rng,
  rpc,
  rpcBatch,
  screenCheckAnswers,
} from "./common";

export {
  canonical,
  chooseSeed,
  ethCalls,
  type Mismatch,
  NonInteger,
  parseJsonExact,
  pool,
  Rng,
  rpc,
  rpcBatch,
} from "./common";

export const ZERO: Hex = `0x${"0".repeat(64)}`;
export const MAX_UINT256 = (1n << 256n) - 1n;
export const ADDRESS_0: Address = "0x0000000000000000000000000000000000000000";
export const ADDRESS_1: Address = "0x0000000000000000000000000000000000000001";

// ---------------------------------------------------------------------------------------------
// Seeded randomness

// ---------------------------------------------------------------------------------------------
// Pools: small on purpose, so that writes collide (re-enables, revokes of what exists) and checks hit.

/** Solidity's bytes32("..."). */
export const bytes32String = (s: string): Hex => stringToHex(s, { size: 32 });

/** Rights the writes use (empty is the most common); each is also queried. */
export const WRITE_RIGHTS: readonly Hex[] = [
  bytes32String("opensea"),
  bytes32String("claim+airdrop & more=yes %20/?#"), // URL-hostile characters, 31 bytes
  bytes32String("0123456789abcdefABCDEF0123456789"), // exactly 32 bytes: no zero padding
  keccak256(stringToHex("non-ascii rights")), // has no string spelling
];
/** Rights no write uses: a check with them only sees empty-rights delegations. */
export const QUERY_ONLY_RIGHTS: readonly Hex[] = [bytes32String("unused"), `0x${"0".repeat(63)}1`];

export const CONTRACTS: readonly Address[] = [
  "0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D",
  "0x6B175474E89094C44Da98b954EedeAC495271d0F",
  "0x76BE3b62873462d2142405439777e971754E8E77",
  ADDRESS_0, // a CONTRACT delegation for contract 0x0 still has a contract (not null)
];

export const TOKEN_IDS: readonly (readonly [number, bigint])[] = [
  [4, 0n],
  [4, 1n],
  [2, 2n],
  [2, 1337n],
  [3, MAX_UINT256],
  [2, MAX_UINT256 - 1n],
  [1, 1n << 255n],
];

export const AMOUNTS: readonly (readonly [number, bigint])[] = [
  [4, 1n],
  [3, 1000n],
  [2, 10n ** 18n],
  [2, MAX_UINT256],
  [1, MAX_UINT256 - 1n],
  [1, (1n << 128n) + 7n],
];

export type Pools = {
  /** Funded accounts that send writes. */
  senders: Address[];
  /** Delegates: most senders, some accounts that never write, and odd addresses. */
  delegates: Address[];
};

export function makePools(accounts: Address[]): Pools {
  const senders = accounts.slice(0, 12).map((a) => getAddress(a));
  const delegates = [
    ...senders.slice(0, 8),
    ...accounts.slice(12, 14).map((a) => getAddress(a)),
    getAddress("0x000000000000000000000000000000000000dEaD"),
    ADDRESS_0, // the contract lets anyone delegate to the zero address
  ];
  return { senders, delegates };
}

// ---------------------------------------------------------------------------------------------
// Writes

export type Write =
  | { fn: "delegateAll"; to: Address; rights: Hex; enable: boolean }
  | { fn: "delegateContract"; to: Address; contract: Address; rights: Hex; enable: boolean }
  | { fn: "delegateERC721"; to: Address; contract: Address; tokenId: bigint; rights: Hex; enable: boolean }
  | { fn: "delegateERC20"; to: Address; contract: Address; rights: Hex; amount: bigint }
  | { fn: "delegateERC1155"; to: Address; contract: Address; tokenId: bigint; rights: Hex; amount: bigint };

/** A write with its sender: enough to name the delegation it touches. */
export type SentWrite = Write & { from: Address };

export type Tx = { from: Address; nonce: number; writes: Write[]; multicall: boolean };

export const WRITE_TYPE: Record<Write["fn"], V2DelegationType> = {
  delegateAll: "ALL",
  delegateContract: "CONTRACT",
  delegateERC721: "ERC721",
  delegateERC20: "ERC20",
  delegateERC1155: "ERC1155",
};

function writeKey(from: Address, w: Write): string {
  const contract = "contract" in w ? w.contract.toLowerCase() : "";
  const tokenId = "tokenId" in w ? w.tokenId : "";
  return `${w.fn}|${from.toLowerCase()}|${w.to.toLowerCase()}|${contract}|${tokenId}|${w.rights}`;
}

/**
 * The seeded stream of transactions. Each sender's transactions carry consecutive nonces, so each
 * sender's own delegations (the contract keys them by sender) change in a known order; the
 * generator keeps that state only to steer toward and count the interesting cases.
 */
export class WriteGenerator {
  readonly nonces = new Map<Address, number>();
  /** Every write generated so far, in generation order. */
  readonly history: SentWrite[] = [];
  readonly stats: Record<string, number> = {};
  private readonly state = new Map<string, { enabled: boolean; amount: bigint }>();
  private readonly bySender = new Map<Address, Write[]>();

  constructor(
    private readonly rng: Rng,
    private readonly pools: Pools,
  ) {}

  private count(name: string, n = 1) {
    this.stats[name] = (this.stats[name] ?? 0) + n;
  }

  nextTx(): Tx {
    const rng = this.rng;
    const from = rng.pick(this.pools.senders);
    const nonce = this.nonces.get(from) ?? 0;
    this.nonces.set(from, nonce + 1);
    const multicall = rng.chance(0.12);
    const writes: Write[] = [];
    const n = multicall ? 2 + rng.int(5) : 1;
    for (let i = 0; i < n; i++) writes.push(this.nextWrite(from));
    this.count("transactions");
    if (multicall) {
      this.count("multicall batches");
      this.count("writes inside multicall", n);
    }
    return { from, nonce, writes, multicall };
  }

  private nextWrite(from: Address): Write {
    const rng = this.rng;
    const own = this.bySender.get(from) ?? [];
    let w: Write;
    if (own.length > 0 && rng.chance(0.45)) {
      // The same delegation again: re-enable, revoke, change the amount, or repeat.
      const base = rng.pick(own);
      w = "enable" in base ? { ...base, enable: rng.chance(0.5) } : { ...base, amount: this.amount() };
    } else {
      const to = rng.chance(0.08) ? from : rng.pick(this.pools.delegates);
      const contract = rng.pick(CONTRACTS.slice(0, rng.chance(0.05) ? 4 : 3));
      const tokenId = rng.weighted(TOKEN_IDS);
      const rights = rng.chance(0.5) ? ZERO : rng.pick(WRITE_RIGHTS);
      const enable = rng.chance(0.6);
      w = rng.weighted<Write>([
        [15, { fn: "delegateAll", to, rights, enable }],
        [20, { fn: "delegateContract", to, contract, rights, enable }],
        [25, { fn: "delegateERC721", to, contract, tokenId, rights, enable }],
        [20, { fn: "delegateERC20", to, contract, rights, amount: this.amount() }],
        [20, { fn: "delegateERC1155", to, contract, tokenId, rights, amount: this.amount() }],
      ]);
    }
    this.account(from, w);
    own.push(w);
    this.bySender.set(from, own);
    this.history.push({ ...w, from });
    return w;
  }

  private amount(): bigint {
    return this.rng.chance(0.3) ? 0n : this.rng.weighted(AMOUNTS);
  }

  /** Counts what the write does to the contract's state (exact: the sender's nonces order them). */
  private account(from: Address, w: Write) {
    this.count(w.fn);
    if (w.to.toLowerCase() === from.toLowerCase()) this.count("self-delegations");
    if (w.rights !== ZERO) this.count("non-empty rights");
    if ("tokenId" in w && w.tokenId >= MAX_UINT256 - 1n) this.count("tokenId near 2^256-1");
    const key = writeKey(from, w);
    const prev = this.state.get(key);
    const enabling = "enable" in w ? w.enable : w.amount !== 0n;
    const amount = "amount" in w ? w.amount : 0n;
    if (enabling) {
      if (prev === undefined) this.count("first enables");
      else if (!prev.enabled) this.count("re-enables of revoked");
      else if ("amount" in w && prev.amount !== amount) this.count("amount changes");
      else this.count("enables of enabled");
      this.state.set(key, { enabled: true, amount });
    } else {
      if (prev === undefined) this.count("disables of never-enabled");
      else if (prev.enabled) this.count("amount" in w ? "revokes by amount 0" : "revokes of enabled");
      else this.count("revokes of revoked");
      if (prev?.enabled) this.state.set(key, { enabled: false, amount: 0n });
    }
  }
}

function writeArgs(w: Write): readonly unknown[] {
  switch (w.fn) {
    case "delegateAll":
      return [w.to, w.rights, w.enable];
    case "delegateContract":
      return [w.to, w.contract, w.rights, w.enable];
    case "delegateERC721":
      return [w.to, w.contract, w.tokenId, w.rights, w.enable];
    case "delegateERC20":
      return [w.to, w.contract, w.rights, w.amount];
    case "delegateERC1155":
      return [w.to, w.contract, w.tokenId, w.rights, w.amount];
  }
}

export function txData(abi: Abi, tx: Tx): Hex {
  const inner = tx.writes.map((w) => encodeFunctionData({ abi, functionName: w.fn, args: writeArgs(w) }));
  return tx.multicall ? encodeFunctionData({ abi, functionName: "multicall", args: [inner] }) : inner[0]!;
}

/** A first enable writes at most 9 fresh slots (~200k gas); this leaves room. */
const txGas = (tx: Tx) => (tx.multicall ? 60_000 + 300_000 * tx.writes.length : 300_000);

// ---------------------------------------------------------------------------------------------
// JSON-RPC

/** Blocks big enough for every write of a run: anvil's 30M would split them (and drop some). */
export async function roomyBlocks(url: string): Promise<void> {
  await rpc(url, "evm_setBlockGasLimit", [toHex(1_000_000_000)]);
}

export type Receipt = {
  transactionHash: Hex;
  status: Hex;
  blockNumber: Hex;
  logs: { address: Address; topics: [Hex, ...Hex[]]; data: Hex; logIndex: Hex; blockNumber: Hex }[];
};

/**
 * Sends the transactions without waiting for receipts (explicit nonces: anvil queues a later nonce
 * until the earlier ones arrive), in waves `spreadMs` apart so that they land in several blocks,
 * then waits until every one is mined and returns the receipts.
 *
 * The chain's block gas limit must hold every transaction pending at once (see `roomyBlocks`):
 * when a large transaction does not fit in what is left of a block, anvil 1.7 drops the sender's
 * later transactions from its pool, and they are never mined.
 */
export async function sendAll(
  url: string,
  registry: Address,
  abi: Abi,
  txs: Tx[],
  seed: number,
  options: { waveSize?: number; spreadMs?: number; timeoutMs?: number } = {},
): Promise<Receipt[]> {
  const { waveSize = 100, spreadMs = 250, timeoutMs = 120_000 } = options;
  const calls = txs.map((tx) => ({
    method: "eth_sendTransaction",
    params: [
      {
        from: tx.from,
        to: registry,
        data: txData(abi, tx),
        gas: toHex(txGas(tx)),
        nonce: toHex(tx.nonce),
        // Far above the base fee however full the blocks get, so nothing stalls in the pool.
        maxFeePerGas: toHex(1000n * 10n ** 9n),
        maxPriorityFeePerGas: toHex(10n ** 9n),
      },
    ],
  }));
  const hashes: Hex[] = [];
  for (const [i, wave] of chunks(calls, waveSize).entries()) {
    if (i > 0 && spreadMs > 0) await new Promise((ok) => setTimeout(ok, spreadMs));
    hashes.push(...((await rpcBatch(url, wave)) as Hex[]));
  }
  const receipts = new Map<Hex, Receipt>();
  const deadline = Date.now() + timeoutMs;
  while (receipts.size < hashes.length) {
    if (Date.now() > deadline) {
      const status = JSON.stringify(await rpc(url, "txpool_status").catch((e: Error) => e.message));
      throw new Error(
        `[SEED=${seed}] ${hashes.length - receipts.size} of ${hashes.length} transactions not mined after ${timeoutMs} ms (txpool ${status})`,
      );
    }
    await new Promise((ok) => setTimeout(ok, 500));
    const missing = hashes.filter((h) => !receipts.has(h));
    const got = (
      await pool(chunks(missing, 200), 4, (batch) =>
        rpcBatch(
          url,
          batch.map((h) => ({ method: "eth_getTransactionReceipt", params: [h] })),
        ),
      )
    ).flat() as (Receipt | null)[];
    for (const [i, r] of got.entries()) if (r) receipts.set(missing[i]!, r);
  }
  return hashes.map((h) => receipts.get(h)!);
}

/** Position of a log on chain: block, then log index. */
export type Position = { block: bigint; logIndex: number };
const before = (a: Position, b: Position) => a.block < b.block || (a.block === b.block && a.logIndex < b.logIndex);

/** The events of the receipts, with the delegation hash each touches. */
export type ChainEvent = Position & { type: V2DelegationType; hash: Hex; enabling: boolean };

const EVENT_TYPE: Record<string, V2DelegationType> = {
  DelegateAll: "ALL",
  DelegateContract: "CONTRACT",
  DelegateERC721: "ERC721",
  DelegateERC20: "ERC20",
  DelegateERC1155: "ERC1155",
};

export function decodeEvents(abi: Abi, registry: Address, receipts: Receipt[]): ChainEvent[] {
  const events: ChainEvent[] = [];
  for (const r of receipts) {
    for (const log of r.logs) {
      if (log.address.toLowerCase() !== registry.toLowerCase()) continue;
      const { eventName, args } = decodeEventLog({ abi, data: log.data, topics: log.topics }) as unknown as {
        eventName: string;
        args: {
          from: Address;
          to: Address;
          contract_?: Address;
          tokenId?: bigint;
          rights: Hex;
          enable?: boolean;
          amount?: bigint;
        };
      };
      const type = EVENT_TYPE[eventName];
      if (!type) throw new Error(`unexpected event ${eventName}`);
      const hash = v2DelegationHash({
        type,
        from: args.from,
        to: args.to,
        rights: args.rights,
        contract: args.contract_,
        tokenId: args.tokenId,
      });
      const enabling = args.enable !== undefined ? args.enable : args.amount !== 0n;
      events.push({ type, hash, enabling, block: BigInt(log.blockNumber), logIndex: Number(log.logIndex) });
    }
  }
  return events.sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0));
}

/** Where each delegation was first enabled: the order of the contract's lists and the API's. */
export function firstEnabled(events: ChainEvent[], into = new Map<Hex, Position>()): Map<Hex, Position> {
  for (const e of events)
    if (e.enabling && !into.has(e.hash)) into.set(e.hash, { block: e.block, logIndex: e.logIndex });
  return into;
}

// ---------------------------------------------------------------------------------------------
// The comparison

export type Oracle = {
  rpcUrl: string;
  serviceUrl: string;
  registry: Address;
  abi: Abi;
  chainId: number;
  seed: number;
  /** Sent with every request to the service (e.g. an `X-API-KEY`, should keyless requests be limited). */
  headers?: Record<string, string>;
};

const CHECK_KINDS = ["all", "contract", "erc721", "erc1155", "erc20"] as const;
export type CheckKind = (typeof CHECK_KINDS)[number];
export type CheckSpec = {
  kind: CheckKind;
  to: Address;
  from: Address;
  contract: Address;
  tokenId: bigint;
  rights: Hex;
};

/**
 * A random check: about half built from a delegation some write touched (so many answers are
 * true or non-zero), perturbed now and then; the rest drawn from the pools.
 */
export function randomCheck(rng: Rng, pools: Pools, history: readonly SentWrite[]): CheckSpec {
  const anyRights = () =>
    rng.weighted<Hex>([
      [4, ZERO],
      [5, rng.pick(WRITE_RIGHTS)],
      [2, rng.pick(QUERY_ONLY_RIGHTS)],
    ]);
  let spec: CheckSpec;
  if (history.length > 0 && rng.chance(0.6)) {
    const w = rng.pick(history);
    const fitting: Record<Write["fn"], readonly CheckKind[]> = {
      delegateAll: CHECK_KINDS,
      delegateContract: ["contract", "erc721", "erc1155", "erc20"],
      delegateERC721: ["erc721"],
      delegateERC20: ["erc20"],
      delegateERC1155: ["erc1155"],
    };
    spec = {
      kind: rng.chance(0.85) ? rng.pick(fitting[w.fn]) : rng.pick(CHECK_KINDS),
      to: w.to,
      from: w.from,
      contract: "contract" in w ? w.contract : rng.pick(CONTRACTS),
      tokenId: "tokenId" in w ? w.tokenId : rng.weighted(TOKEN_IDS),
      // Matching rights, or a check with rights that also sees the empty-rights delegation.
      rights: rng.chance(0.75) ? w.rights : anyRights(),
    };
    if (rng.chance(0.1)) spec.tokenId = rng.weighted(TOKEN_IDS);
    if (rng.chance(0.1)) spec.contract = rng.pick(CONTRACTS);
    if (rng.chance(0.05)) [spec.to, spec.from] = [spec.from, spec.to];
    if (rng.chance(0.05)) spec.to = rng.pick(pools.delegates);
  } else {
    spec = {
      kind: rng.pick(CHECK_KINDS),
      to: rng.pick([...pools.delegates, ...pools.senders]),
      from: rng.pick(pools.senders),
      contract: rng.pick(CONTRACTS),
      tokenId: rng.weighted(TOKEN_IDS),
      rights: anyRights(),
    };
  }
  // The contract's empty and revoked markers never delegate, even to themselves.
  const odd = rng.next();
  if (odd < 0.03) spec.from = ADDRESS_0;
  else if (odd < 0.06) spec.from = ADDRESS_1;
  return spec;
}

/** An address spelled lowercase, EIP-55 checksummed, or uppercase: all three are accepted. */
function spellAddress(rng: Rng, a: Address): string {
  const lower = a.toLowerCase();
  return rng.weighted([
    [2, lower],
    [2, getAddress(lower)],
    [1, `0x${lower.slice(2).toUpperCase()}`],
  ]);
}

/** The string spelling of a rights value, when it has one (bytes32("...") of printable ASCII). */
export function rightsString(rights: Hex): string | undefined {
  const bytes = hexToBytes(rights);
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === 0) end--;
  let s = "";
  for (let i = 0; i < end; i++) {
    const b = bytes[i]!;
    if (b < 0x20 || b > 0x7e) return undefined;
    s += String.fromCharCode(b);
  }
  return s.startsWith("0x") ? undefined : s;
}

/** The query string of a check, with every accepted spelling of each parameter used at random. */
export function checkUrl(rng: Rng, chainId: number, spec: CheckSpec): string {
  const params: [string, string][] = [["chainId", String(chainId)]];
  const twoNames = spec.kind !== "all" && spec.kind !== "contract";
  for (const [party, names] of [
    [spec.to, ["to", "delegate"]],
    [spec.from, ["from", "vault"]],
  ] as const) {
    if (!twoNames) params.push([names[0], spellAddress(rng, party)]);
    else if (rng.chance(0.06)) params.push([names[0], spellAddress(rng, party)], [names[1], spellAddress(rng, party)]);
    else params.push([rng.pick(names), spellAddress(rng, party)]);
  }
  if (spec.kind !== "all") params.push(["contract", spellAddress(rng, spec.contract)]);
  if (spec.kind === "erc721" || spec.kind === "erc1155") {
    params.push(["tokenId", rng.chance(0.5) ? spec.tokenId.toString() : `0x${spec.tokenId.toString(16)}`]);
  }
  if (spec.rights === ZERO) {
    const how = rng.int(3);
    if (how === 1) params.push(["rights", ""]);
    if (how === 2) params.push(["rights", ZERO]);
  } else {
    const text = rightsString(spec.rights);
    if (text !== undefined && rng.chance(0.5)) params.push(["rights", text]);
    else params.push(["rights", rng.chance(0.7) ? spec.rights : `0x${spec.rights.slice(2).toUpperCase()}`]);
  }
  if (rng.chance(0.03)) params.push(["utm_source", "differential"]);
  rng.shuffle(params);
  const query = params.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join("&");
  return `/registry/v2/check/${spec.kind}?${query}`;
}

const CHECK_FUNCTION: Record<CheckKind, string> = {
  all: "checkDelegateForAll",
  contract: "checkDelegateForContract",
  erc721: "checkDelegateForERC721",
  erc1155: "checkDelegateForERC1155",
  erc20: "checkDelegateForERC20",
};

function checkCall(spec: CheckSpec): { functionName: string; args: readonly unknown[] } {
  const { to, from, contract, tokenId, rights } = spec;
  switch (spec.kind) {
    case "all":
      return { functionName: CHECK_FUNCTION.all, args: [to, from, rights] };
    case "contract":
    case "erc20":
      return { functionName: CHECK_FUNCTION[spec.kind], args: [to, from, contract, rights] };
    case "erc721":
    case "erc1155":
      return { functionName: CHECK_FUNCTION[spec.kind], args: [to, from, contract, tokenId, rights] };
  }
}

const get = (o: Oracle, url: string) => askService(o.serviceUrl, url, o.headers);

/** The block the service has indexed up to, from any answer for the chain. */
export async function indexedBlock(o: Oracle): Promise<bigint | undefined> {
  const a = await get(o, `/registry/v2/check/all?chainId=${o.chainId}&to=${ADDRESS_1}&from=${ADDRESS_1}`);
  return a.status === 200 ? a.block : undefined;
}

const fmt = (v: unknown) => (typeof v === "bigint" ? v.toString() : JSON.stringify(v));

export type CheckResult = { compared: number; positive: number; mismatches: Mismatch[] };

/**
 * Asks the service each check, then asks the contract the same at the block the answer reports
 * (its X-Indexed-Block), and compares. `minBlock`: answers must reflect at least this block.
 */
export async function compareChecks(
  o: Oracle,
  specs: CheckSpec[],
  urls: string[],
  minBlock: bigint,
  concurrency = 32,
): Promise<CheckResult> {
  const answers = await pool(urls, concurrency, (url) => get(o, url));
  const { toCall, mismatches } = screenCheckAnswers(answers, minBlock);
  const expected = await ethCalls(
    o,
    toCall.map(({ i, block }) => ({ ...checkCall(specs[i]!), block })),
  );
  let positive = 0;
  const wrong: { i: number; block: bigint; got: boolean | bigint | string; want: boolean | bigint }[] = [];
  toCall.forEach(({ i, block }, j) => {
    const want = expected[j] as boolean | bigint;
    const a = answers[i]!;
    if (want === true || (typeof want === "bigint" && want > 0n)) positive++;
    const got: boolean | bigint | string =
      typeof want === "boolean"
        ? a.body === "true"
          ? true
          : a.body === "false"
            ? false
            : `body ${a.body}`
        : /^(0|[1-9][0-9]*)$/.test(a.body)
          ? BigInt(a.body)
          : `body ${a.body}`;
    if (got !== want) wrong.push({ i, block, got, want });
  });
  // A clue for the report: does the wrong answer match the chain one block later or earlier?
  const latest = BigInt((await rpc(o.rpcUrl, "eth_blockNumber")) as string);
  const near = (d: bigint) =>
    wrong.map(({ i, block }) => ({
      ...checkCall(specs[i]!),
      block: block + d < 0n ? 0n : block + d > latest ? latest : block + d,
    }));
  const [next, prev] = [await ethCalls(o, near(1n)), await ethCalls(o, near(-1n))];
  wrong.forEach(({ i, block, got, want }, k) => {
    const clue =
      got === next[k]
        ? ` (the contract's answer at block ${block + 1n})`
        : got === prev[k]
          ? ` (the contract's answer at block ${block - 1n})`
          : "";
    mismatches.push({
      what: `check at X-Indexed-Block ${block}`,
      query: answers[i]!.url,
      expected: fmt(want),
      got: fmt(got) + clue,
    });
  });
  return { compared: toCall.length, positive, mismatches };
}

// ---------------------------------------------------------------------------------------------
// Listings

type ContractDelegation = {
  type_: number;
  to: Address;
  from: Address;
  rights: Hex;
  contract_: Address;
  tokenId: bigint;
  amount: bigint;
};

const DELEGATION_TYPES = ["NONE", "ALL", "CONTRACT", "ERC721", "ERC20", "ERC1155"] as const;
const RECORD_TYPE: Record<string, string> = {
  ALL: "ALL",
  CONTRACT: "CONTRACT",
  ERC721: "TOKEN",
  ERC20: "CONTRACT",
  ERC1155: "TOKEN",
};

/** The API record (api-contract.md) of one delegation as the contract returns it. */
export function expectedRecord(d: ContractDelegation): Record<string, unknown> {
  const delegationType = DELEGATION_TYPES[d.type_] ?? `unknown ${d.type_}`;
  const token = delegationType === "ERC721" || delegationType === "ERC1155";
  return {
    type: RECORD_TYPE[delegationType],
    delegationType,
    from: getAddress(d.from),
    to: getAddress(d.to),
    contract: delegationType === "ALL" ? null : getAddress(d.contract_),
    tokenId: token ? d.tokenId : null,
    rights: d.rights.toLowerCase(),
    amount: delegationType === "ERC20" || delegationType === "ERC1155" ? d.amount : null,
  };
}

type ApiRecord = Record<string, unknown>;

/** The contract's hash of an API record (its fields name the delegation). */
function recordHash(r: ApiRecord): Hex | undefined {
  try {
    return v2DelegationHash({
      type: r.delegationType as V2DelegationType,
      from: String(r.from).toLowerCase() as Address,
      to: String(r.to).toLowerCase() as Address,
      rights: String(r.rights).toLowerCase() as Hex,
      contract: r.contract === null ? undefined : (String(r.contract).toLowerCase() as Address),
      tokenId: typeof r.tokenId === "bigint" ? r.tokenId : undefined,
    });
  } catch {
    return undefined;
  }
}

export type ListingResult = { compared: number; records: number; mismatches: Mismatch[] };

/**
 * Each wallet's listing against getOutgoingDelegations / getIncomingDelegations (and their hash
 * lists) at the listing's X-Indexed-Block; and the listing's order against where each delegation was
 * first enabled on chain (`positions`).
 */
export async function compareListings(
  o: Oracle,
  rng: Rng,
  wallets: readonly Address[],
  positions: Map<Hex, Position>,
  minBlock: bigint,
): Promise<ListingResult> {
  const mismatches: Mismatch[] = [];
  let records = 0;
  let compared = 0;
  await pool(wallets, 8, async (wallet) => {
    const url = `/registry/v2/${spellAddress(rng, wallet)}?chainId=${o.chainId}`;
    const a = await get(o, url);
    const bad = (what: string, expected: string, got: string) => mismatches.push({ what, query: url, expected, got });
    if (a.status !== 200 || !a.contentType.startsWith("application/json") || a.block === undefined) {
      return bad(
        "listing answer",
        "200 application/json with X-Indexed-Block",
        `${a.status} ${a.contentType} ${a.body.slice(0, 300)}`,
      );
    }
    if (a.block < minBlock) return bad("listing answer", `X-Indexed-Block >= ${minBlock}`, String(a.block));
    let list: ApiRecord[];
    try {
      const parsed = parseJsonExact(a.body);
      if (!Array.isArray(parsed)) throw new Error("not an array");
      list = parsed as ApiRecord[];
    } catch (error) {
      return bad("listing body", "a JSON array", `${(error as Error).message}: ${a.body.slice(0, 300)}`);
    }
    compared++;
    records += list.length;
    const w = wallet.toLowerCase();
    const [out, inc, outHashes, incHashes] = (await ethCalls(o, [
      { functionName: "getOutgoingDelegations", args: [wallet], block: a.block },
      { functionName: "getIncomingDelegations", args: [wallet], block: a.block },
      { functionName: "getOutgoingDelegationHashes", args: [wallet], block: a.block },
      { functionName: "getIncomingDelegationHashes", args: [wallet], block: a.block },
    ])) as [ContractDelegation[], ContractDelegation[], Hex[], Hex[]];
    const where = `listing of ${wallet} at block ${a.block}`;

    const from = list.filter((r) => String(r.from).toLowerCase() === w);
    const to = list.filter((r) => String(r.to).toLowerCase() === w);
    for (const [name, apiSide, contractSide, hashes] of [
      ["outgoing (from == wallet)", from, out, outHashes],
      ["incoming (to == wallet)", to, inc, incHashes],
    ] as const) {
      const want = contractSide.map(expectedRecord);
      // Only rights' case is free ("bytes32 hex"); every other field must be exact.
      const norm = (r: ApiRecord) =>
        canonical({ ...r, rights: typeof r.rights === "string" ? r.rights.toLowerCase() : r.rights });
      const gotList = apiSide.map(norm);
      const wantList = want.map((r) => canonical(r));
      if (gotList.join("\n") !== wantList.join("\n")) {
        const k = gotList.findIndex((g, i) => g !== wantList[i]);
        const at = k === -1 ? Math.min(gotList.length, wantList.length) : k;
        bad(
          `${where}: ${name} records (${wantList.length} expected, ${gotList.length} got; first difference at #${at})`,
          wantList[at] ?? "(end of list)",
          gotList[at] ?? "(end of list)",
        );
      }
      apiSide.forEach((r, i) => {
        const hash = recordHash(r);
        if (hashes[i] !== undefined && hash !== hashes[i])
          bad(`${where}: ${name} hash of record #${i}`, hashes[i]!, `${hash} for ${canonical(r)}`);
      });
      if (hashes.length !== contractSide.length)
        bad(`${where}: ${name} oracle hash list length`, String(contractSide.length), String(hashes.length));
    }
    for (const r of list) {
      if (String(r.from).toLowerCase() !== w && String(r.to).toLowerCase() !== w)
        bad(`${where}: record of another wallet`, "from or to == wallet", canonical(r));
      if (!/^0x[0-9a-fA-F]{64}$/.test(String(r.rights)))
        bad(`${where}: rights format`, "0x + 64 hex digits", String(r.rights));
    }
    const self = out.filter((d) => d.to.toLowerCase() === w).length;
    if (list.length !== out.length + inc.length - self) {
      bad(
        `${where}: length (a self-delegation appears once)`,
        String(out.length + inc.length - self),
        String(list.length),
      );
    }
    // The whole list, outgoing and incoming merged, in order of first enable.
    let last: Position | undefined;
    for (const [i, r] of list.entries()) {
      const hash = recordHash(r);
      const pos = hash && positions.get(hash);
      if (!pos) {
        bad(`${where}: record #${i} was never enabled on chain`, "a delegation enabled by some write", canonical(r));
        continue;
      }
      if (last && !before(last, pos)) {
        bad(
          `${where}: order of record #${i}`,
          `after block ${last.block} log ${last.logIndex}`,
          `block ${pos.block} log ${pos.logIndex}: ${canonical(r)}`,
        );
      }
      last = pos;
    }
  });
  return { compared, records, mismatches };
}

export function report(seed: number, label: string, mismatches: Mismatch[]): string {
  const first = mismatches
    .slice(0, 10)
    .map(
      (m, i) =>
        `  ${i + 1}. ${m.what}\n     query:    ${m.query}\n     expected: ${m.expected}\n     got:      ${m.got}`,
    )
    .join("\n");
  return `[SEED=${seed}] ${label}: ${mismatches.length} mismatches with the contract (rerun with SEED=${seed}):\n${first}`;
}
