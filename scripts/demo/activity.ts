/**
 * The demo's activity, drawn from a fixed seed so that every run is alike: hundreds of wallets
 * making thousands of delegations of every kind on both registries, revoking and delegating again,
 * a few wallets with hundreds; then, while the demo runs, a few writes every few seconds.
 */
import { type Address, getAddress, type Hex, keccak256, stringToHex, zeroHash } from "viem";
import { Rng } from "../../devkit/random";
import type { DelegateCall, RegistryCall } from "../../devkit/v1/calls";
import type { Write } from "../../devkit/v2/generate";

/** One transaction of the demo: v2 writes (several go through multicall), or one v1 write. */
export type DemoTx = { from: Address; v2: Write[] } | { from: Address; v1: RegistryCall };

export const SEED = 20_240_917;

/** A made-up wallet: the demo sends from it through anvil's impersonation, no key needed. */
const wallet = (i: number): Address =>
  getAddress(`0x${keccak256(stringToHex(`delegation demo wallet ${i}`)).slice(-40)}`);

export const PEOPLE: readonly Address[] = Array.from({ length: 500 }, (_, i) => wallet(i));
/** A guild lending hundreds of NFTs to its players, a hot wallet many vaults trust, a v1 power user. */
export const WHALES = { guild: PEOPLE[0]!, hotWallet: PEOPLE[1]!, v1Vault: PEOPLE[2]! };
const PLAYERS = PEOPLE.slice(440, 480);

const NFTS: readonly Address[] = [
  "0xBC4CA0EdA7647A8aB7C2061c2E118A18a936f13D", // BAYC
  "0x60E4d786628Fea6478F785A6d7e704777c86a7c6", // MAYC
  "0xED5AF388653567Af2F388E6224dC7C4b3241C544", // Azuki
  "0xBd3531dA5CF5857e7CfAA92426877b022e612cf8", // Pudgy Penguins
  "0x8a90CAb2b38dba80c64b7734e58Ee1dB38B8992e", // Doodles
  "0x57f1887a8BF19b14fC0dF6Fd9B2acc9Af147eA85", // ENS
];
const TOKENS: readonly { address: Address; decimals: number }[] = [
  { address: "0x6B175474E89094C44Da98b954EedeAC495271d0F", decimals: 18 }, // DAI
  { address: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", decimals: 6 }, // USDC
  { address: "0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2", decimals: 18 }, // WETH
  { address: "0x4d224452801ACEd8B2F0aebE155379bb5D594381", decimals: 18 }, // APE
];
const MULTI_TOKENS: readonly Address[] = [
  "0x76BE3b62873462d2142405439777e971754E8E77", // Parallel Alpha
  "0x28472a58A490c5e09A238847F66A68a47cC76f0f", // adidas Originals
];
const RIGHTS: readonly Hex[] = ["claim", "airdrop", "governance", "mint"].map((s) => stringToHex(s, { size: 32 }));

/** Writes grouped by sender, each sender's in order. */
function bySender<T>(writes: [Address, T][]): Map<Address, T[]> {
  const out = new Map<Address, T[]>();
  for (const [from, w] of writes) out.set(from, [...(out.get(from) ?? []), w]);
  return out;
}

/** The demo's seeded activity: the history written first, then a few writes at a time. */
export class Activity {
  private readonly rng = new Rng(SEED);

  /** The history written before the service starts, in rounds: each is sent once the one before is mined. */
  history(): DemoTx[][] {
    const rng = this.rng;
    const v2: [Address, Write][] = [];
    for (const from of PEOPLE.slice(3, 330)) {
      const n = rng.weighted([
        [30, 1],
        [25, 2],
        [15, 3],
        [10, 5],
        [8, 8],
        [6, 12],
        [6, 20],
      ] as const);
      for (let i = 0; i < n; i++) v2.push([from, this.v2Write(from, PEOPLE)]);
      if (rng.chance(0.8))
        v2.push([from, { fn: "delegateAll", to: WHALES.hotWallet, rights: this.rights(), enable: true }]);
    }
    for (let i = 0; i < 320; i++) {
      const write: Write = {
        fn: "delegateERC721",
        to: rng.pick(PLAYERS),
        contract: rng.pick(NFTS),
        tokenId: BigInt(1 + rng.int(10_000)),
        rights: zeroHash,
        enable: true,
      };
      v2.push([WHALES.guild, write]);
    }
    const v1: [Address, RegistryCall][] = PEOPLE.slice(180, 380).flatMap((vault) =>
      this.v1Story(vault).map((c): [Address, RegistryCall] => [vault, c]),
    );
    for (let i = 0; i < 150; i++) v1.push([WHALES.v1Vault, this.v1Delegation(WHALES.v1Vault, PEOPLE)]);
    const round1 = [...this.v2Txs(bySender(v2)), ...this.v1Txs(bySender(v1))];

    // Round 2: revocations (v2 writes, v1 revokeSelf by delegates) and v2 amounts changed.
    const revoked = v2.filter(() => rng.chance(0.12));
    const changed = v2.filter(
      (e): e is [Address, Extract<Write, { fn: "delegateERC20" }>] => e[1].fn === "delegateERC20" && rng.chance(0.2),
    );
    const selfRevoked = rng
      .shuffle(v1.filter((e): e is [Address, DelegateCall] => "value" in e[1] && e[1].value))
      .slice(0, 30);
    const round2 = [
      ...this.v2Txs(
        bySender([
          ...revoked.map(([from, w]): [Address, Write] => [
            from,
            "enable" in w ? { ...w, enable: false } : { ...w, amount: 0n },
          ]),
          ...changed.map(([from, w]): [Address, Write] => [from, { ...w, amount: this.erc20Amount(w.contract) }]),
        ]),
      ),
      ...this.v1Txs(bySender(selfRevoked.map(([vault, c]) => [getAddress(c.delegate), { fn: "revokeSelf", vault }]))),
    ];
    // Round 3: some of those delegated again.
    const round3 = [
      ...this.v2Txs(bySender(revoked.filter(() => rng.chance(0.4)))),
      ...this.v1Txs(bySender(selfRevoked.filter(() => rng.chance(0.5)))),
    ];
    return [round1, round2, round3];
  }

  /** A few writes among `wallets`, as the demo keeps going. */
  live(wallets: readonly Address[]): DemoTx[] {
    return Array.from({ length: 1 + this.rng.int(4) }, (): DemoTx => {
      const from = this.rng.pick(wallets);
      if (this.rng.chance(0.3)) return { from, v1: this.v1Delegation(from, wallets) };
      return { from, v2: Array.from({ length: 1 + this.rng.int(3) }, () => this.v2Write(from, wallets)) };
    });
  }

  /**
   * A v1 vault's writes: delegations, sometimes one undone, all revoked, or one delegate's revoked,
   * then delegated again.
   */
  private v1Story(vault: Address): RegistryCall[] {
    const rng = this.rng;
    const made = Array.from({ length: 1 + rng.int(6) }, () => this.v1Delegation(vault, PEOPLE));
    const calls: RegistryCall[] = [...made];
    if (rng.chance(0.1)) calls.push({ ...rng.pick(made), value: false });
    if (rng.chance(0.1)) {
      calls.push({ fn: "revokeAllDelegates" });
      if (rng.chance(0.5)) calls.push(rng.pick(made));
    } else if (rng.chance(0.12)) {
      const again = rng.pick(made);
      calls.push({ fn: "revokeDelegate", delegate: again.delegate });
      if (rng.chance(0.5)) calls.push(again);
    }
    return calls;
  }

  private v1Delegation(vault: Address, among: readonly Address[]): DelegateCall {
    const delegate = this.other(vault, among);
    const contract = this.rng.pick(NFTS);
    const tokenId = BigInt(1 + this.rng.int(10_000));
    return this.rng.weighted<DelegateCall>([
      [3, { fn: "delegateForAll", delegate, value: true }],
      [3, { fn: "delegateForContract", delegate, contract, value: true }],
      [4, { fn: "delegateForToken", delegate, contract, tokenId, value: true }],
    ]);
  }

  private v2Write(from: Address, among: readonly Address[]): Write {
    const rng = this.rng;
    const to = this.other(from, among);
    const rights = this.rights();
    const nft = rng.pick(NFTS);
    const token = rng.pick(TOKENS).address;
    return rng.weighted<Write>([
      [15, { fn: "delegateAll", to, rights, enable: true }],
      [20, { fn: "delegateContract", to, contract: nft, rights, enable: true }],
      [35, { fn: "delegateERC721", to, contract: nft, tokenId: BigInt(1 + rng.int(10_000)), rights, enable: true }],
      [15, { fn: "delegateERC20", to, contract: token, rights, amount: this.erc20Amount(token) }],
      [
        15,
        {
          fn: "delegateERC1155",
          to,
          contract: rng.pick(MULTI_TOKENS),
          tokenId: BigInt(1 + rng.int(20)),
          rights,
          amount: BigInt(1 + rng.int(25)),
        },
      ],
    ]);
  }

  /** Whole units of the token, in its decimals. */
  private erc20Amount(token: Address): bigint {
    const decimals = TOKENS.find((t) => t.address === token)?.decimals ?? 18;
    return BigInt(this.rng.pick([1, 5, 25, 100, 250, 1_000, 5_000, 20_000])) * 10n ** BigInt(decimals);
  }

  private rights(): Hex {
    return this.rng.chance(0.8) ? zeroHash : this.rng.pick(RIGHTS);
  }

  /** Someone else: nobody delegates to themselves here. */
  private other(self: Address, among: readonly Address[]): Address {
    for (;;) {
      const a = this.rng.pick(among);
      if (a !== self) return a;
    }
  }

  /** A sender's v2 writes as one transaction each, or batched through multicall. */
  private v2Txs(writesBySender: Map<Address, Write[]>): DemoTx[] {
    return [...writesBySender].flatMap(([from, writes]) => {
      const size = this.rng.chance(0.5) ? 40 : 1;
      return Array.from({ length: Math.ceil(writes.length / size) }, (_, i) => ({
        from,
        v2: writes.slice(i * size, (i + 1) * size),
      }));
    });
  }

  private v1Txs(callsBySender: Map<Address, RegistryCall[]>): DemoTx[] {
    return [...callsBySender].flatMap(([from, calls]) => calls.map((call) => ({ from, v1: call })));
  }
}
