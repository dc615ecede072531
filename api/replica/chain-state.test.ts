import { type Address, getAddress, type Hex, zeroAddress, zeroHash } from "viem";
import { describe, expect, it } from "vitest";
import { type V1Key, v1InForce, v1KeyString } from "../../core/v1";
import {
  isAmountType,
  V2_CHECK_KINDS,
  type V2Check,
  type V2CheckQuery,
  type V2Scope,
  type V2State,
  v2Check,
  v2DelegationHash,
  v2KeyColumns,
} from "../../core/v2";
import { xorshift32 } from "../../core/xorshift";
import { toJson } from "../http/json";
import { JsonBytes } from "../http/json-bytes";
import { v1Record, v2Record } from "../routes/records";
import { V1_SPEC } from "../routes/v1";
import { V2_SPEC } from "../routes/v2";
import type { PageJson, PageRequest, Position, Told } from "../store/store";
import {
  ChainState,
  rowKey,
  SCAN_ROWS,
  type Spellings,
  type StateRow,
  type V1Entry,
  type V2Entry,
} from "./chain-state";

const v2InDirection = V2_SPEC.inDirection;
const v1InDirection = V1_SPEC.inDirection;

const A = "0x000000000000000000000000000000000000000a" as Address;
const B = "0x000000000000000000000000000000000000000b" as Address;
const C = "0x000000000000000000000000000000000000000c" as Address;
const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}` as Hex;

const v2 = (n: number, from: Address, to: Address, at: [number, number], more: Partial<V2Entry> = {}): StateRow => ({
  table: "v2",
  row: {
    hash: hash(n),
    delegationType: "ALL",
    from,
    to,
    contract: null,
    tokenId: null,
    rights: zeroHash,
    amount: null,
    enabled: true,
    firstBlock: at[0],
    firstLogIndex: at[1],
    updatedBlock: at[0],
    ...more,
  },
});
const v1 = (vault: Address, delegate: Address, at: [number, number], more: Partial<V1Entry> = {}): StateRow => ({
  table: "v1",
  row: {
    type: "ALL",
    vault,
    delegate,
    contract: zeroAddress,
    tokenId: 0n,
    enabled: true,
    vaultVersion: 0,
    pairVersion: 0,
    createdBlock: at[0],
    createdLogIndex: at[1],
    firstBlock: at[0],
    updatedBlock: at[0],
    ...more,
  },
});
const put = (s: ChainState, r: StateRow, final = 0) => s.put(rowKey(r), r, final);
const hashesOf = (s: ChainState, w: Address) => s.v2Wallet(w).map((r) => r.to + r.from);

describe("ChainState", () => {
  it("lists a wallet's enabled v2 rows, incoming and outgoing, in first-enable order; a self-delegation once", () => {
    const s = new ChainState();
    put(s, v2(1, A, B, [5, 0]));
    put(s, v2(2, C, A, [3, 1]));
    put(s, v2(3, A, A, [7, 2]));
    put(s, v2(4, A, C, [6, 0], { enabled: false }));
    expect(s.v2Wallet(A).map((r) => [r.from, r.to])).toEqual([
      [C, A],
      [A, B],
      [A, A],
    ]);
    expect(s.v2Wallet(B).map((r) => r.from)).toEqual([A]);
  });

  it("an update keeps the row's place; a revoke hides it and a re-enable shows it in its first place", () => {
    const s = new ChainState();
    put(s, v2(1, A, B, [1, 0]));
    put(s, v2(2, A, C, [2, 0]));
    put(s, v2(1, A, B, [1, 0], { enabled: false, updatedBlock: 3 }));
    expect(s.v2Wallet(A).map((r) => r.to)).toEqual([C]);
    expect(s.v2Enabled([hash(1), hash(2)])).toEqual(new Map([[hash(2), { enabled: true, amount: 0n }]]));
    put(s, v2(1, A, B, [1, 0], { updatedBlock: 4 }));
    expect(s.v2Wallet(A).map((r) => r.to)).toEqual([B, C]);
  });

  it("amounts: v2Enabled reports the amount of enabled amount rows, nothing for others", () => {
    const s = new ChainState();
    put(s, v2(1, A, B, [1, 0], { delegationType: "ERC20", contract: C, amount: 7n }));
    put(s, v2(2, A, B, [1, 1], { delegationType: "ERC20", contract: C, amount: 0n, enabled: false }));
    expect(s.v2Enabled([hash(1), hash(2), hash(3)])).toEqual(new Map([[hash(1), { enabled: true, amount: 7n }]]));
  });

  it("a row put back in another place (after a reorganization) is listed there", () => {
    const s = new ChainState();
    put(s, v2(1, A, B, [1, 0]));
    put(s, v2(2, A, C, [2, 0]));
    put(s, v2(3, A, B, [3, 0]));
    s.put(rowKey(v2(1, A, B, [1, 0])), undefined, 0);
    put(s, v2(1, A, B, [4, 0]));
    put(s, v2(4, C, A, [2, 5]));
    expect(s.v2Wallet(A).map((r) => r.to + r.from)).toEqual([C + A, A + C, B + A, B + A]);
    expect(hashesOf(s, B).length).toBe(2);
  });

  it("v1: in force only at the current vault and pair versions, ordered by creation", () => {
    const s = new ChainState();
    put(s, v1(A, B, [4, 0]));
    put(s, v1(A, C, [2, 0]));
    put(s, v1(C, A, [3, 0], { type: "TOKEN", contract: B, tokenId: 9n }));
    expect(s.v1Wallet(A).map((r) => [r.vault, r.delegate])).toEqual([
      [A, C],
      [C, A],
      [A, B],
    ]);
    // revokeDelegate(B) by A: the pair's version moves on.
    put(s, { table: "pair", row: { vault: A, delegate: B, version: 1, updatedBlock: 5 } });
    expect(s.v1Wallet(A).map((r) => r.delegate)).toEqual([C, A]);
    // revokeAllDelegates by A.
    put(s, { table: "vault", row: { vault: A, version: 1, updatedBlock: 6 } });
    expect(s.v1Wallet(A).map((r) => r.vault)).toEqual([C]);
    // Delegated again at the new versions: in force, at its new place.
    put(s, v1(A, B, [7, 0], { vaultVersion: 1, pairVersion: 1 }));
    expect(s.v1InForce([{ type: "ALL", vault: A, delegate: B, contract: zeroAddress, tokenId: 0n }])).toEqual([
      { type: "ALL", vault: A, delegate: B, contract: zeroAddress, tokenId: 0n },
    ]);
    put(s, v1(A, B, [7, 0], { vaultVersion: 1, pairVersion: 1, enabled: false, updatedBlock: 8 }));
    expect(s.v1InForce([{ type: "ALL", vault: A, delegate: B, contract: zeroAddress, tokenId: 0n }])).toEqual([]);
  });

  it("v2EnabledAt: as held past each candidate row's last change, nothing before its first enable, else none", () => {
    const s = new ChainState();
    put(s, v2(1, A, B, [3, 0]));
    put(s, v2(2, A, C, [4, 0], { enabled: false, updatedBlock: 9 }));
    s.block = 10;
    // Past the block held: not known here.
    expect(s.v2EnabledAt([hash(1)], 11)).toBeUndefined();
    // Row 3 never existed: it cannot change an answer at any block.
    const known = s.v2EnabledAt([hash(1), hash(3)], 3);
    expect(known && [...known.keys()]).toEqual([hash(1)]);
    expect(s.v2EnabledAt([hash(1), hash(2)], 8)).toBeUndefined();
    expect([...(s.v2EnabledAt([hash(1), hash(2)], 9)?.keys() ?? [])]).toEqual([hash(1)]);
    // Before the row's first enable the contract held nothing under its hash: told, and not enabled.
    expect(s.v2EnabledAt([hash(1)], 2)?.size).toBe(0);
    // Row 2 was first enabled at 4 and changed at 9: between them only the history tells; before, nothing.
    expect(s.v2EnabledAt([hash(2)], 5)).toBeUndefined();
    expect(s.v2EnabledAt([hash(1), hash(2)], 3)?.size).toBe(1);
    // A row a reorganization removed never existed on the branch held.
    s.put(rowKey(v2(2, A, C, [4, 0])), undefined, 0);
    expect(s.v2EnabledAt([hash(2)], 1)?.size).toBe(0);
    // A block past what 4 bytes hold is never taken for the held answer.
    put(s, v2(4, A, B, [5, 0], { updatedBlock: 2 ** 32 + 5 }));
    s.block = 2 ** 34;
    expect(s.v2EnabledAt([hash(4)], 2 ** 33)).toBeUndefined();
  });

  it("v1InForceAt: none once the key's row, its vault's version or its pair's changed after the block", () => {
    const s = new ChainState();
    const key = { type: "ALL", vault: A, delegate: B, contract: zeroAddress, tokenId: 0n } as const;
    put(s, v1(A, B, [4, 0]));
    s.block = 9;
    expect(s.v1InForceAt([key], 4)).toEqual([key]);
    expect(s.v1InForceAt([key], 10)).toBeUndefined();
    // Before the key was first written it was in no set: told, and not in force.
    expect(s.v1InForceAt([key], 3)).toEqual([]);
    put(s, { table: "pair", row: { vault: A, delegate: C, version: 1, updatedBlock: 6 } });
    expect(s.v1InForceAt([key], 5)).toEqual([key]);
    put(s, { table: "pair", row: { vault: A, delegate: B, version: 1, updatedBlock: 7 } });
    expect(s.v1InForceAt([key], 6)).toBeUndefined();
    expect(s.v1InForceAt([key], 7)).toEqual([]);
    put(s, { table: "vault", row: { vault: A, version: 1, updatedBlock: 8 } });
    expect(s.v1InForceAt([key], 7)).toBeUndefined();
    expect(s.v1InForceAt([key], 8)).toEqual([]);
    // Removed by a reorganization: the versions never moved on the branch held.
    s.put(`vault:${A}`, undefined, 0);
    s.put(`pair:${A}|${B}`, undefined, 0);
    expect(s.v1InForceAt([key], 4)).toEqual([key]);
    // No row for the key: nothing in force, at any block.
    expect(s.v1InForceAt([{ ...key, delegate: C }], 1)).toEqual([]);
  });

  it("v1InForceAt: before a key's first write nothing, whatever changed since; after it, only what did not", () => {
    const s = new ChainState();
    const key = { type: "ALL", vault: A, delegate: B, contract: zeroAddress, tokenId: 0n } as const;
    // First written at 2, voided by the vault at 3, delegated again at 5 and written at 6.
    put(s, { table: "vault", row: { vault: A, version: 1, updatedBlock: 3 } });
    put(s, v1(A, B, [5, 0], { vaultVersion: 1, firstBlock: 2, updatedBlock: 6 }));
    s.block = 9;
    expect(s.v1InForceAt([key], 6)).toEqual([key]);
    for (const block of [2, 3, 4, 5]) expect(s.v1InForceAt([key], block), `block ${block}`).toBeUndefined();
    for (const block of [0, 1]) expect(s.v1InForceAt([key], block), `block ${block}`).toEqual([]);
    const other = { ...key, delegate: C };
    put(s, v1(A, C, [7, 0], { vaultVersion: 1 }));
    expect(s.v1ConsultedAt([key, other], 1)).toEqual({ found: new Set(), untold: new Set() });
    expect(s.v1ConsultedAt([key, other], 4)).toEqual({ found: new Set(), untold: new Set([key]) });
    expect(s.v1ConsultedAt([key, other], 7)).toEqual({ found: new Set([key, other]), untold: new Set() });
  });

  it("remembers the rows each block past the final one changed, and forgets final blocks", () => {
    const s = new ChainState();
    put(s, v2(1, A, B, [3, 0]), 4);
    put(s, v2(2, A, B, [5, 0]), 4);
    put(s, v1(A, B, [6, 0]), 4);
    put(s, { table: "vault", row: { vault: A, version: 1, updatedBlock: 7 } }, 4);
    expect([...s.touched.keys()].sort()).toEqual([5, 6, 7]);
    expect(s.touchedAfter(5)).toEqual(new Set([rowKey(v1(A, B, [6, 0])), `vault:${A}`]));
    // Asking forgets nothing: a sync may fail before it reads them again.
    expect([...s.touched.keys()].sort()).toEqual([5, 6, 7]);
    s.forgetTouchedAfter(5);
    expect([...s.touched.keys()]).toEqual([5]);
    s.fingerprints.set(5, "x").set(9, "y");
    s.finalize(5);
    expect([...s.touched.keys()]).toEqual([]);
    expect([...s.fingerprints.keys()]).toEqual([9]);
  });

  it("removing a row takes it out of every wallet's list", () => {
    const s = new ChainState();
    put(s, v2(1, A, B, [1, 0]));
    put(s, v1(A, B, [1, 1]));
    s.put(rowKey(v2(1, A, B, [1, 0])), undefined, 0);
    s.put(rowKey(v1(A, B, [1, 1])), undefined, 0);
    expect(s.v2Wallet(A)).toEqual([]);
    expect(s.v2Wallet(B)).toEqual([]);
    expect(s.v1Wallet(A)).toEqual([]);
    expect(s.v2Enabled([hash(1)]).size).toBe(0);
  });

  it("spells each address a listing names as viem's getAddress, while it numbers more (its arrays grow)", () => {
    const s = new ChainState();
    const next = xorshift32(SEED ^ 0x3c6ef372);
    const random = (): Address =>
      `0x${Array.from({ length: 5 }, () => (next() >>> 0).toString(16).padStart(8, "0")).join("")}`;
    const [wallet, vault] = [random(), random()];
    const listed = (rows: { [name: string]: unknown }[]) =>
      new Set(rows.flatMap((r) => [r.from, r.to, r.contract, r.vault, r.delegate].filter((a) => a != null)));
    const expectSpelt = (spelt: Spellings, rows: { [name: string]: unknown }[]) => {
      expect([...spelt.keys()].sort(), `the listed addresses (SEED=${SEED})`).toEqual([...listed(rows)].sort());
      for (const [text, spelling] of spelt) expect(spelling, `${text} (SEED=${SEED})`).toBe(getAddress(text));
    };
    for (let n = 1; n <= 600; n++) {
      const [other, contract] = [random(), random()];
      put(s, v2(n, n % 2 === 0 ? wallet : other, n % 2 === 0 ? other : wallet, [n, 0], { contract }));
      put(s, v1(vault, other, [n, 1]));
      // Spelt as the copy grows, and again below, after its arrays have grown past where each was written.
      if (n % 97 === 0) {
        const spelt: Spellings = new Map();
        expectSpelt(spelt, s.v2Wallet(wallet, spelt));
      }
    }
    const v2Spelt: Spellings = new Map();
    const v1Spelt: Spellings = new Map();
    expectSpelt(v2Spelt, s.v2Wallet(wallet, v2Spelt));
    expect(v2Spelt.size).toBe(1 + 2 * 600);
    // v1: vaults and delegates (contracts are not numbered: spelt by the caller).
    const v1Rows = s.v1Wallet(vault, v1Spelt);
    expectSpelt(
      v1Spelt,
      v1Rows.map(({ vault, delegate }) => ({ vault, delegate })),
    );
    expect(v1Spelt.size).toBe(1 + 600);
    // addressJson: each address the copy holds as a JSON string in its case; none it does not hold.
    const out = new JsonBytes(16);
    const held = [...v2Spelt.keys(), ...v1Spelt.keys()];
    const expected = held.map((a) => `"${getAddress(a)}"`).join("");
    expect(held.every((a) => s.addressJson(a, out))).toBe(true);
    for (const unheld of [random(), random(), `${wallet}00`, wallet.slice(0, 40)]) {
      expect(s.addressJson(unheld, out), unheld).toBe(false);
    }
    expect(Buffer.from(out.bytes()).toString("latin1"), `SEED=${SEED}`).toBe(expected);
  });
});

const SEED = Number(process.env.SEED ?? Date.now() % 2 ** 31);

/**
 * The state tables as the SQL store holds them, answered the plain way: rows in maps, lists by
 * filtering and sorting. ChainState must answer exactly the same after any sequence of puts.
 */
class PlainState {
  readonly v2 = new Map<Hex, V2Entry>();
  readonly v1 = new Map<string, V1Entry>();
  readonly vaults = new Map<Address, number>();
  readonly pairs = new Map<string, number>();

  put(key: string, r: StateRow | undefined) {
    const [table, id] = [key.slice(0, key.indexOf(":")), key.slice(key.indexOf(":") + 1)];
    const map = { v2: this.v2, v1: this.v1, vault: this.vaults, pair: this.pairs }[table]! as Map<string, unknown>;
    if (r === undefined) map.delete(id);
    else if (r.table === "v2" || r.table === "v1") map.set(id, r.row);
    else map.set(id, r.row.version);
  }

  inForce(row: V1Entry) {
    return v1InForce(row, {
      vault: this.vaults.get(row.vault) ?? 0,
      pair: this.pairs.get(`${row.vault}|${row.delegate}`) ?? 0,
    });
  }

  v2Wallet(w: Address) {
    return [...this.v2.values()]
      .filter((r) => r.enabled && (r.from === w || r.to === w))
      .sort((a, b) => a.firstBlock - b.firstBlock || a.firstLogIndex - b.firstLogIndex)
      .map(({ hash, delegationType, from, to, contract, tokenId, rights, amount }) => ({
        hash,
        delegationType,
        from,
        to,
        contract,
        tokenId,
        rights,
        amount,
      }));
  }

  v1Rows(rows: V1Entry[]) {
    return rows
      .filter((r) => this.inForce(r))
      .sort((a, b) => a.createdBlock - b.createdBlock || a.createdLogIndex - b.createdLogIndex)
      .map(({ type, vault, delegate, contract, tokenId }) => ({ type, vault, delegate, contract, tokenId }));
  }
}

describe(`ChainState against the plain tables, over seeded random puts (SEED=${SEED})`, () => {
  // Thousands of puts, each compared whole: 3.5 s on a busy 2-core machine, past the unit tests' 5 s
  // default once beside other work.
  it("answers every check and listing alike after each put: new rows, updates, rows moved or removed by \
reorganizations, version counters", () => {
    const next = xorshift32(SEED);
    const int = (n: number) => next() % n;
    const pick = <T>(items: readonly T[]) => items[int(items.length)]!;
    const wallets = [A, B, C, "0x00000000000000000000000000000000000000ff" as Address];
    /** Every row is first placed at a position of its own, as a log is. */
    let nextPosition = 0;
    const position = () => {
      nextPosition += 1 + int(3);
      return [Math.floor(nextPosition / 4), nextPosition % 4] as const;
    };
    // A few rows get a position lower down, never taken: a reorganization puts a row back earlier.
    const taken = new Set<string>();
    const earlier = (): readonly [number, number] => {
      const at = [int(Math.max(1, Math.floor(nextPosition / 4))), 4 + int(1_000)] as const;
      if (taken.has(String(at))) return earlier();
      taken.add(String(at));
      return at;
    };
    const v2Shapes = Array.from({ length: 24 }, (_, n) => ({
      hash: hash(n + 1),
      from: pick(wallets),
      to: pick(wallets),
      delegationType: pick(["ALL", "CONTRACT", "ERC721", "ERC20", "ERC1155"] as const),
      contract: pick([null, C]),
      tokenId: pick([null, 0n, 7n, 2n ** 256n - 1n]),
      rights: pick([zeroHash, hash(0xdead)]),
    }));
    const v1Keys = Array.from({ length: 16 }, () => ({
      type: pick(["ALL", "CONTRACT", "TOKEN"] as const),
      vault: pick(wallets),
      delegate: pick(wallets),
      contract: pick([zeroAddress, C]),
      tokenId: pick([0n, 5n, 2n ** 256n - 1n]),
    }));

    const compact = new ChainState();
    const plain = new PlainState();
    const listed = new Map<Address, { revision: string; rows: unknown }>();
    let held = 0;
    let untoldKeys = 0;
    for (let step = 0; step < 3_000; step++) {
      let row: StateRow;
      const kind = int(10);
      if (kind < 5) {
        const shape = pick(v2Shapes);
        const old = plain.v2.get(shape.hash);
        const [firstBlock, firstLogIndex] =
          old && int(3) > 0 ? [old.firstBlock, old.firstLogIndex] : int(5) === 0 ? earlier() : position();
        row = {
          table: "v2",
          row: {
            ...shape,
            amount: pick([null, 0n, 3n, 2n ** 255n]),
            enabled: int(3) > 0,
            firstBlock,
            firstLogIndex,
            updatedBlock: step,
          },
        };
      } else if (kind < 8) {
        const key = pick(v1Keys);
        // First written at or before its last write, and kept, as the indexer writes it (core/v1-rows.ts).
        const old = plain.v1.get(v1KeyString(key));
        // Its creation is a log of its own (core/v1.ts, v1NextState): kept through later writes, or
        // made again later, or put back earlier by a reorganization.
        const [createdBlock, createdLogIndex] =
          old && int(2) === 0 ? [old.createdBlock, old.createdLogIndex] : int(3) === 0 ? earlier() : position();
        row = {
          table: "v1",
          row: {
            ...key,
            enabled: int(3) > 0,
            vaultVersion: int(3),
            pairVersion: int(3),
            createdBlock,
            createdLogIndex,
            firstBlock: old?.firstBlock ?? int(step + 1),
            updatedBlock: step,
          },
        };
      } else if (kind < 9) row = { table: "vault", row: { vault: pick(wallets), version: int(3), updatedBlock: step } };
      else
        row = {
          table: "pair",
          row: { vault: pick(wallets), delegate: pick(wallets), version: int(3), updatedBlock: step },
        };
      const key = rowKey(row);
      // One put in eight takes a row away, as a reorganization takes away a row its blocks made.
      const value = int(8) === 0 ? undefined : row;
      // Now and then trimmed, as a loaded copy is (api/replica/feed.ts): later puts grow it again.
      if (int(40) === 0) compact.trim();
      compact.put(key, value, 0);
      plain.put(key, value);

      const at = `step ${step}, ${value === undefined ? "removed" : "put"} ${key}`;
      for (const w of wallets) {
        const v2 = compact.v2Wallet(w);
        const v1 = compact.v1Wallet(w);
        expect(v2, at).toEqual(plain.v2Wallet(w));
        expect(v1, at).toEqual(plain.v1Rows([...plain.v1.values()].filter((r) => r.vault === w || r.delegate === w)));
        // A listing kept for its revision (api/routes/listing-cache.ts) is right while the revision holds.
        const revision = compact.walletRevision(w);
        const before = listed.get(w);
        if (before?.revision === revision) {
          expect({ v2, v1 }, `${at}: ${w}'s revision held`).toEqual(before.rows);
          held++;
        }
        listed.set(w, { revision, rows: { v2, v1 } });
      }
      const hashes = [...v2Shapes.map((s) => s.hash), hash(999)];
      expect(compact.v2Enabled(hashes), at).toEqual(
        new Map(
          hashes.flatMap((h) => {
            const r = plain.v2.get(h);
            return r?.enabled ? [[h, { enabled: true, amount: r.amount ?? 0n }] as const] : [];
          }),
        ),
      );
      const asked = [pick(v1Keys), pick(v1Keys), { ...pick(v1Keys), tokenId: 6n }];
      expect(compact.v1InForce(asked), at).toEqual(
        plain.v1Rows(asked.flatMap((k) => plain.v1.get(v1KeyString(k)) ?? [])),
      );
      // The same as a set of the keys asked, at the head and at a block before it.
      const inForce = new Set(compact.v1InForce(asked).map(v1KeyString));
      const consulted = compact.v1Consulted(asked);
      expect(consulted.untold.size, at).toBe(0);
      expect(
        asked.map((k) => consulted.found.has(k)),
        at,
      ).toEqual(asked.map((k) => inForce.has(v1KeyString(k))));
      // Key by key: untold exactly where v1InForceAt cannot tell that key, else the same answer.
      compact.block = step;
      const before = int(step + 1);
      const consultedAt = compact.v1ConsultedAt(asked, before)!;
      expect(
        asked.map((k) => {
          const inForceAt = compact.v1InForceAt([k], before);
          return { untold: consultedAt.untold.has(k), found: consultedAt.found.has(k), inForceAt: inForceAt?.length };
        }),
        `${at}, at ${before}`,
      ).toEqual(
        asked.map((k) => {
          const inForceAt = compact.v1InForceAt([k], before);
          return { untold: inForceAt === undefined, found: inForceAt?.length === 1, inForceAt: inForceAt?.length };
        }),
      );
      untoldKeys += consultedAt.untold.size;
    }
    // Most puts leave most wallets alone: the revisions held often enough for the check to bite.
    expect(held).toBeGreaterThan(3_000 * wallets.length * 0.3);
    // And keys the copy could not tell at a block before its own came up.
    expect(untoldKeys).toBeGreaterThan(100);
  }, 30_000);
});

describe(`v2Consulted against v2Enabled by hash, over seeded random rows (SEED=${SEED})`, () => {
  it("finds by fields among a pair's few rows, by hash among many, as the hashes find, at the head and before", () => {
    const next = xorshift32(SEED ^ 0x5be0cd19);
    const int = (n: number) => next() % n;
    const pick = <T>(items: readonly T[]) => items[int(items.length)]!;
    const D = "0x00000000000000000000000000000000000000dd" as Address;
    const wallets = [A, B, C, D];
    // Two hubs with more than SCAN_ROWS rows between them: a check between them is looked up by hash.
    const hubFrom: Address = "0x00000000000000000000000000000000000000f1";
    const hubTo: Address = "0x00000000000000000000000000000000000000f2";
    const filler = (n: number) => `0x${(0x1000 + n).toString(16).padStart(40, "0")}` as Address;
    const types = ["ALL", "CONTRACT", "ERC721", "ERC20", "ERC1155"] as const;
    const contracts = [C, "0x00000000000000000000000000000000000000ce" as Address];
    const rightsValues = [zeroHash, `0x${"ab".repeat(32)}` as Hex];
    // Past 2^53 too: the copy holds those aside (api/replica/uint-cells.ts).
    const tokenIds = [0n, 1n, 2n ** 256n - 1n];
    const s = new ChainState();
    let position = 0;
    const row = (from: Address, to: Address, updatedBlock: number, contract?: Address): StateRow => {
      const delegationType = contract === undefined ? pick(types) : "CONTRACT";
      const key = {
        type: delegationType,
        from,
        to,
        rights: pick(rightsValues),
        contract: delegationType === "ALL" ? undefined : (contract ?? pick(contracts)),
        tokenId: delegationType === "ERC721" || delegationType === "ERC1155" ? pick(tokenIds) : undefined,
      };
      position++;
      return {
        table: "v2",
        row: {
          ...v2KeyColumns(key),
          delegationType,
          hash: v2DelegationHash(key),
          amount: isAmountType(delegationType) ? pick([0n, 1n, 2n, 2n ** 255n]) : null,
          enabled: int(3) > 0,
          // First enabled at or before its last change, as the indexer writes it (core/v2-rows.ts).
          firstBlock: 1 + int(updatedBlock),
          firstLogIndex: position,
          updatedBlock,
        },
      };
    };
    /** The rows held, by hash: what a wallet's listing at a block is made of. */
    const rows = new Map<Hex, V2Entry>();
    const keep = (r: StateRow, removed = false) => {
      if (r.table !== "v2") return;
      if (removed) rows.delete(r.row.hash);
      else rows.set(r.row.hash, r.row);
    };
    for (let i = 0; i <= SCAN_ROWS; i++) {
      const spokes = [row(hubFrom, filler(i), 1 + int(20)), row(filler(i), hubTo, 1 + int(20))];
      for (const r of [...spokes, row(hubFrom, hubTo, 1 + int(20), filler(i))]) {
        put(s, r);
        keep(r);
      }
    }
    // Wallets of a few rows each, whose listings at past blocks are often told, some rows not yet made.
    const few = Array.from({ length: 40 }, (_, i) => filler(1_000 + i));
    for (let i = 0; i < 60; i++) {
      const r = row(pick(few), pick(few), 1 + int(20));
      put(s, r);
      keep(r);
    }
    for (let i = 0; i < 400; i++) {
      const r = row(pick([...wallets, hubFrom]), pick([...wallets, hubTo]), 1 + int(20));
      // One put in eight takes a row away, as a reorganization takes away a row its blocks made.
      const removed = int(8) === 0;
      // Trimmed now and then and at the end, as a loaded copy is (api/replica/feed.ts).
      if (int(50) === 0) s.trim();
      s.put(rowKey(r), removed ? undefined : r, 0);
      keep(r, removed);
    }
    s.trim();
    s.block = 20;
    const query = () => {
      const kind = pick(V2_CHECK_KINDS);
      const asked: V2CheckQuery = {
        kind,
        from: pick<Address>([...wallets, hubFrom, zeroAddress, "0x00000000000000000000000000000000000000ee"]),
        to: pick([...wallets, hubTo]),
        // Rights in either case name the same delegation.
        rights: pick([...rightsValues, `0x${"AB".repeat(32)}` as Hex]),
      };
      if (kind !== "all") asked.contract = pick(contracts);
      if (kind === "erc721" || kind === "erc1155") asked.tokenId = pick(tokenIds);
      return asked;
    };
    const byScope = (c: V2Check, { found }: Told<V2Check, Map<V2Scope, V2State>>) =>
      c.answerOf((i) => found.get(c.scopes[i]!));
    const byHash = (c: V2Check, enabled: Map<Hex, V2State>) => c.answer((h) => enabled.get(h));
    let [hubs, held, untold, enabledSeen] = [0, 0, 0, 0];
    const listings = { told: 0, untold: 0, rows: 0, notYet: 0 };
    for (let n = 0; n < 3_000; n++) {
      const queries = [query(), query(), query()];
      const checks = queries.map(v2Check);
      const hashes = queries.flatMap((q) => v2Check(q).hashes);
      const at = `checks ${n}: ${checks.map((c) => `${c.from}→${c.to}`).join(", ")}`;
      const found = s.v2Consulted(checks);
      expect(found.untold.size, at).toBe(0);
      const enabled = s.v2Enabled(hashes);
      expect(
        checks.map((c) => byScope(c, found)),
        at,
      ).toEqual(checks.map((c) => byHash(c, enabled)));
      const block = 1 + int(21);
      // Check by check: untold exactly where v2EnabledAt cannot tell that check, else the same answer.
      const foundAt = s.v2ConsultedAt(checks, block);
      // Past the block held, none: the history tells it all.
      if (foundAt === undefined) expect(block, at).toBeGreaterThan(s.block);
      else {
        checks.forEach((c, i) => {
          const enabledAt = s.v2EnabledAt(v2Check(queries[i]!).hashes, block);
          expect(foundAt.untold.has(c), `${at} at ${block}`).toBe(enabledAt === undefined);
          if (enabledAt === undefined) return;
          expect(byScope(c, foundAt), `${at} at ${block}`).toEqual(byHash(c, enabledAt));
          held++;
        });
        untold += foundAt.untold.size;
      }
      // A wallet's listing at the block: told where each of its rows is (by hash), and then its
      // rows enabled now and at the block, in the order listed now.
      const wallet = pick([...wallets, hubFrom, hubTo, ...few, ...few]);
      const listed = s.v2WalletAt(wallet, block);
      const own = [...rows.values()].filter((r) => r.from === wallet || r.to === wallet);
      const told = block <= s.block && own.every((r) => s.v2EnabledAt([r.hash], block) !== undefined);
      expect(listed !== undefined, `${wallet}'s listing at ${block}`).toBe(told);
      if (listed !== undefined) {
        const expected = s.v2Wallet(wallet).filter((r) => s.v2EnabledAt([r.hash], block)!.has(r.hash));
        expect(listed, `${wallet}'s listing at ${block}`).toEqual(expected);
        listings.rows += listed.length;
        // Rows listed now that were not made yet at the block.
        listings.notYet += s.v2Wallet(wallet).filter((r) => rows.get(r.hash)!.firstBlock > block).length;
      }
      listings[told ? "told" : "untold"]++;
      hubs += checks.filter((c) => c.from === hubFrom && c.to === hubTo).length;
      enabledSeen += found.found.size;
    }
    // Each path and outcome came up often enough to bite.
    expect(hubs).toBeGreaterThan(50);
    expect(held).toBeGreaterThan(200);
    expect(untold).toBeGreaterThan(200);
    expect(enabledSeen).toBeGreaterThan(300);
    expect(listings.told).toBeGreaterThan(200);
    expect(listings.untold).toBeGreaterThan(200);
    expect(listings.rows).toBeGreaterThan(200);
    expect(listings.notYet).toBeGreaterThan(200);
  });
});

describe(`v2WalletsJson against v2Record's JSON, over seeded random rows (SEED=${SEED})`, () => {
  it("writes each wallet's listing in each direction, at the head and at past blocks, as the records' JSON", () => {
    const next = xorshift32(SEED ^ 0x1b873593);
    const int = (n: number) => next() % n;
    const pick = <T>(items: readonly T[]) => items[int(items.length)]!;
    const random = (): Address =>
      `0x${Array.from({ length: 5 }, () => (next() >>> 0).toString(16).padStart(8, "0")).join("")}`;
    const wallets = Array.from({ length: 12 }, random);
    const contracts = Array.from({ length: 4 }, random);
    const s = new ChainState();
    let told = 0;
    let untold = 0;
    for (let n = 1; n <= 400; n++) {
      const delegationType = pick(["ALL", "CONTRACT", "ERC721", "ERC20", "ERC1155"] as const);
      const firstBlock = n;
      put(
        s,
        v2(int(150) + 1, pick(wallets), pick(wallets), [firstBlock, int(4)], {
          delegationType,
          contract: delegationType === "ALL" ? null : pick(contracts),
          tokenId: delegationType === "ERC721" || delegationType === "ERC1155" ? pick([0n, 7n, 2n ** 256n - 1n]) : null,
          amount: isAmountType(delegationType) ? pick([1n, 3n, 2n ** 255n]) : null,
          rights: pick([zeroHash, hash(0xdead)]),
          enabled: int(4) > 0,
          updatedBlock: firstBlock + int(3) * int(40),
        }),
      );
      s.block = n + 120;
      if (n % 40 !== 0) continue;
      const asked = [...wallets.slice(int(6), 6 + int(7)), random()];
      for (const direction of ["both", "incoming", "outgoing"] as const) {
        for (const block of [undefined, int(s.block + 1), s.block, s.block + 1]) {
          const lists = asked.map((w) => (block === undefined ? s.v2Wallet(w) : s.v2WalletAt(w, block)));
          // A small buffer first, so that the writer grows it.
          const out = new JsonBytes(16);
          const records = s.v2WalletsJson(asked, direction, block, 10_000, out);
          const at = `${direction} at ${block ?? "the head"}, step ${n}`;
          if (lists.some((list) => list === undefined)) {
            expect(records, at).toBeUndefined();
            untold++;
            continue;
          }
          const expected = lists.map((list, i) =>
            list!.filter((r) => direction === "both" || v2InDirection(r, asked[i]!, direction)),
          );
          expect(Buffer.from(out.bytes()).toString("latin1"), at).toBe(
            toJson(expected.map((l) => l.map((r) => v2Record(r)))),
          );
          expect(records, at).toBe(expected.flat().length);
          told++;
          // Stops past `most`, saying so.
          if (records! > 0)
            expect(s.v2WalletsJson(asked, direction, block, records! - 1, new JsonBytes())).toBe(records);
        }
      }
    }
    // Both outcomes came up.
    expect(told).toBeGreaterThan(50);
    expect(untold).toBeGreaterThan(10);
  });
});

/**
 * A listing's pages at `limit`, each written by `read` and following the last one's position, until
 * one says no more follow. Each page must be given, hold at most `limit` records, be the JSON of
 * the next of `expected`'s records, end at the last one's position (`positionOf`) and say more
 * follow exactly while not all were given.
 */
function followJsonPages<R>(
  read: (page: PageRequest, out: JsonBytes) => Omit<PageJson, "json"> | undefined,
  limit: number | undefined,
  expected: readonly R[],
  record: (row: R) => unknown,
  positionOf: (row: R) => [number, number],
  at: string,
) {
  let after: Position | undefined;
  let given = 0;
  for (let pages = 0; ; pages++) {
    const where = `${at}, limit ${limit}, page ${pages}`;
    // A small buffer, so that the writer grows it.
    const out = new JsonBytes(16);
    const page = read({ after, limit }, out);
    expect(page, where).toBeDefined();
    const { count, last, more } = page!;
    expect(count, where).toBeLessThanOrEqual(limit ?? Number.POSITIVE_INFINITY);
    const rows = expected.slice(given, given + count);
    expect(Buffer.from(out.bytes()).toString("latin1"), where).toBe(toJson(rows.map(record)));
    given += rows.length;
    const end = rows.at(-1);
    expect(last && [Number(last.block), last.logIndex], where).toEqual(end && positionOf(end));
    expect(more, where).toBe(given < expected.length);
    if (!more) return;
    after = last;
  }
}

describe(`v2WalletPageJson against v2WalletAt's records, over seeded random rows (SEED=${SEED})`, () => {
  it("pages each wallet's listing in each direction by position, at the head and at past blocks", () => {
    const next = xorshift32(SEED ^ 0x5bd1e995);
    const int = (n: number) => next() % n;
    const pick = <T>(items: readonly T[]) => items[int(items.length)]!;
    const wallets = [A, B, C, ...Array.from({ length: 5 }, (_, i) => `0x${String(i + 1).repeat(40)}` as Address)];
    const s = new ChainState();
    /** Each hash's position: its first put's, kept through later ones (as core/v2-rows.ts keeps it). */
    const positions = new Map<Hex, [number, number]>();
    let told = 0;
    let untold = 0;
    for (let n = 1; n <= 300; n++) {
      const id = int(120) + 1;
      const first = positions.get(hash(id)) ?? [n, int(4)];
      positions.set(hash(id), first);
      put(
        s,
        v2(id, pick(wallets), pick(wallets), first, {
          enabled: int(4) > 0,
          updatedBlock: n + int(3) * int(40),
        }),
      );
      s.block = n + 120;
      if (n % 30 !== 0) continue;
      for (const wallet of [pick(wallets), pick(wallets)]) {
        for (const direction of ["both", "incoming", "outgoing"] as const) {
          for (const block of [int(s.block + 1), s.block, s.block + 1]) {
            const whole = s.v2WalletAt(wallet, block);
            const at = `${wallet} ${direction} at ${block}, step ${n}`;
            if (whole === undefined) {
              // Read whole, the page reads every row of the direction; "both" reads every row.
              if (direction === "both") {
                expect(s.v2WalletPageJson(wallet, block, direction, {}, new JsonBytes()), at).toBeUndefined();
              }
              untold++;
              continue;
            }
            const expected = whole.filter((r) => direction === "both" || v2InDirection(r, wallet, direction));
            for (const limit of [1, 2, 5, undefined]) {
              const read = (page: PageRequest, out: JsonBytes) =>
                s.v2WalletPageJson(wallet, block, direction, page, out);
              followJsonPages(
                read,
                limit,
                expected,
                (row) => v2Record(row),
                (row) => positions.get(row.hash)!,
                at,
              );
            }
            told++;
          }
        }
      }
    }
    // Both outcomes came up.
    expect(told).toBeGreaterThan(30);
    expect(untold).toBeGreaterThan(5);
  });
});

/** A contract no row names as a wallet, with letters in its EIP-55 case: the copy spells it unnumbered. */
const NOT_A_WALLET = "0xabcdef0123456789abcdef0123456789abcdef01" as Address;

describe(`v1WalletPageJson against v1Wallet's and v1InForceAt's records, seeded rows (SEED=${SEED})`, () => {
  it("pages each wallet's v1 listing in each direction by creation, at the head and at past blocks", () => {
    const next = xorshift32(SEED ^ 0x27d4eb2f);
    const int = (n: number) => next() % n;
    const pick = <T>(items: readonly T[]) => items[int(items.length)]!;
    const wallets = [A, B, C, `0x${"4".repeat(40)}` as Address];
    const keys = Array.from({ length: 40 }, () => ({
      type: pick(["ALL", "CONTRACT", "TOKEN"] as const),
      vault: pick(wallets),
      delegate: pick(wallets),
      contract: pick([zeroAddress, C, NOT_A_WALLET]),
      tokenId: pick([0n, 5n]),
    }));
    const s = new ChainState();
    /** Each key's creation (kept through its later writes, as core/v1-rows.ts keeps it) and first block. */
    const made = new Map<string, { at: [number, number]; first: number }>();
    let told = 0;
    let untold = 0;
    for (let n = 1; n <= 400; n++) {
      const kind = int(8);
      if (kind < 6) {
        const key = pick(keys);
        const made1 = made.get(v1KeyString(key));
        const first = made1?.first ?? n;
        // Now and then made again at this step's log, as a key not in force is (core/v1.ts): it moves.
        const at: [number, number] = made1 === undefined || int(4) === 0 ? [n, int(4)] : made1.at;
        made.set(v1KeyString(key), { at, first });
        const more = { ...key, enabled: int(4) > 0, vaultVersion: int(2), pairVersion: int(2), updatedBlock: n };
        put(s, v1(key.vault, key.delegate, at, { ...more, firstBlock: first }));
      } else if (kind < 7) put(s, { table: "vault", row: { vault: pick(wallets), version: int(2), updatedBlock: n } });
      else
        put(s, {
          table: "pair",
          row: { vault: pick(wallets), delegate: pick(wallets), version: int(2), updatedBlock: n },
        });
      s.block = n;
      if (n % 20 !== 0) continue;
      for (const wallet of wallets) {
        for (const direction of ["both", "incoming", "outgoing"] as const) {
          const mine = keys.filter((k) =>
            direction === "both" ? k.vault === wallet || k.delegate === wallet : v1InDirection(k, wallet, direction),
          );
          const distinct = [...new Map(mine.map((k) => [v1KeyString(k), k])).values()];
          for (const block of [n, int(n + 1), n - int(10)]) {
            const at = `${wallet} ${direction} at ${block}, step ${n}`;
            // The head's listing, or as at the block, key by key: what the pages must give.
            const inForce = block === n ? s.v1Wallet(wallet) : s.v1InForceAt(distinct, block);
            if (inForce === undefined) {
              // Any page, however short: an untold row past it may have been on it then, made again since.
              for (const limit of [1, 3, undefined]) {
                const page = s.v1WalletPageJson(wallet, block, direction, { limit }, new JsonBytes());
                expect(page, `${at}, limit ${limit}`).toBeUndefined();
              }
              untold++;
              continue;
            }
            const expected = inForce.filter((k) => direction === "both" || v1InDirection(k, wallet, direction));
            for (const limit of [1, 3, undefined]) {
              const read = (page: PageRequest, out: JsonBytes) =>
                s.v1WalletPageJson(wallet, block, direction, page, out);
              const positionOf = (row: V1Key) => made.get(v1KeyString(row))!.at;
              followJsonPages(read, limit, expected, (row) => v1Record(row), positionOf, at);
            }
            told++;
          }
        }
      }
    }
    // Both outcomes came up.
    expect(told).toBeGreaterThan(100);
    expect(untold).toBeGreaterThan(20);
  });
});

describe(`v2VaultsJson against core's v2Vaults, over seeded random rows (SEED=${SEED})`, () => {
  it("writes the vaults of every check kind as v2VaultRecords' JSON, as the rows change", () => {
    const next = xorshift32(SEED ^ 0x27d4eb2f);
    const int = (n: number) => next() % n;
    const pick = <T>(items: readonly T[]) => items[int(items.length)]!;
    const address = (n: number) => `0x${n.toString(16).padStart(40, "0")}` as Address;
    const hot = [address(0xa1), address(0xa2), address(0xa3)];
    // 0x0 and 0x1 never delegate; a hot wallet may delegate to itself or to another.
    const vaults = [address(0), address(1), ...hot, ...Array.from({ length: 30 }, (_, i) => address(0x100 + i))];
    const contracts = [address(0xc1), address(0xc2)];
    const tokenIds = [0n, 7n, 2n ** 256n - 1n];
    const rights = [zeroHash, hash(0xdead)];
    const s = new ChainState();
    let found = 0;
    for (let n = 1; n <= 600; n++) {
      const type = pick(["ALL", "CONTRACT", "ERC721", "ERC20", "ERC1155"] as const);
      const key = {
        type,
        from: pick(vaults),
        to: pick(hot),
        rights: pick(rights),
        contract: type === "ALL" ? undefined : pick(contracts),
        tokenId: type === "ERC721" || type === "ERC1155" ? pick(tokenIds) : undefined,
      };
      put(
        s,
        v2(0, key.from, key.to, [n, 0], {
          ...v2KeyColumns(key),
          hash: v2DelegationHash(key),
          delegationType: type,
          amount: isAmountType(type) ? pick([0n, 5n, 2n ** 200n]) : null,
          enabled: int(5) > 0,
        }),
      );
      if (n % 10 !== 0) continue;
      for (const to of hot) {
        const q = {
          kind: pick(V2_CHECK_KINDS),
          to,
          contract: pick([...contracts, address(0xc9)]),
          tokenId: pick(tokenIds),
          // A rights value no row holds, too.
          rights: pick([...rights, hash(0xbeef)]),
        };
        const incoming = s.v2Wallet(to).filter((r) => r.to === to);
        const expected = V2_SPEC.vaults(q, incoming);
        const out = new JsonBytes(8);
        const at = `${JSON.stringify(q, (_, v) => (typeof v === "bigint" ? `${v}` : v))} after ${n} puts`;
        expect(s.v2VaultsJson(q, out), at).toBe(incoming.length);
        expect(Buffer.from(out.bytes()).toString("latin1"), at).toBe(toJson(expected.map(V2_SPEC.vaultRecord)));
        found += expected.length;
      }
    }
    // Vaults were found, not only empty lists.
    expect(found).toBeGreaterThan(100);
  });
});
