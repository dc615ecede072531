/**
 * The rows the indexer writes for a stream of registry events, without a chain: every table of
 * ponder.schema.ts but chain_head (the test sets it with the checkpoint), made event by event by the
 * rules the indexer writes with (core/v2-rows.ts, core/v1-rows.ts), so that the history and the
 * state always amount to the same thing. For datasets too large to write through a chain
 * (test/indexes.test.ts); nothing here decides what an answer should be.
 */
import { getTableColumns, getTableName, type Table } from "drizzle-orm";
import type pg from "pg";
import { type Address, type Hex, toHex, zeroAddress } from "viem";
import type { EventPlace } from "../../core/rows";
import { quoteIdentifier, table as tableName } from "../../core/sql";
import type { V1Key } from "../../core/v1";
import { type V1DelegationRow, v1DelegateWrites, v1RevokeWrites } from "../../core/v1-rows";
import { type V2DelegationKey, v2DelegationHash } from "../../core/v2";
import { type V2DelegationRow, v2Writes } from "../../core/v2-rows";
import { chunks } from "../../devkit/pool";
import * as schema from "../../ponder.schema";
import type { Position } from "./position";

/** A v2 event: the write that emitted it, at its position. */
export type V2Emitted = Position & V2DelegationKey & ({ enable: boolean } | { amount: bigint });

/** A v1 event at its position; a RevokeDelegate names the pair it voids (what the indexer recovers). */
export type V1Emitted = Position &
  (
    | { kind: "DelegateForAll"; vault: Address; delegate: Address; value: boolean }
    | { kind: "DelegateForContract"; vault: Address; delegate: Address; contract: Address; value: boolean }
    | {
        kind: "DelegateForToken";
        vault: Address;
        delegate: Address;
        contract: Address;
        tokenId: bigint;
        value: boolean;
      }
    | { kind: "RevokeAllDelegates"; vault: Address }
    /** `sender`: the event's delegate (the vault itself for revokeDelegate, the delegate for revokeSelf). */
    | { kind: "RevokeDelegate"; vault: Address; sender: Address; revoked: Address }
  );

type Row = Record<string, unknown>;
/** Rows by table name, by column name. */
export type Tables = Map<string, Row[]>;

const inOrder = (a: Position, b: Position) =>
  a.block === b.block ? a.logIndex - b.logIndex : a.block < b.block ? -1 : 1;

/** An event's place: its chain, block (with a made-up hash and time) and log. */
const placeOf = (chainId: number, e: Position): EventPlace => ({
  chainId,
  id: `${chainId}-${e.block}-${e.logIndex}`,
  block: { number: e.block, hash: toHex(e.block, { size: 32 }), timestamp: 1_600_000_000n + e.block * 12n },
  transactionHash: toHex((e.block << 16n) + BigInt(e.logIndex), { size: 32 }),
  logIndex: e.logIndex,
});

/** `table`'s rows as SQL names them: by table name, by column name. */
function sqlRows(tables: [Table, Row[]][]): Tables {
  return new Map(
    tables.map(([table, rows]) => {
      const columns = Object.entries(getTableColumns(table));
      return [getTableName(table), rows.map((row) => Object.fromEntries(columns.map(([k, c]) => [c.name, row[k]])))];
    }),
  );
}

/** Each event's delegation hash, once: a dataset is made into rows again at each block a test reads it at. */
const hashes = new WeakMap<V2Emitted, Hex>();
const hashOf = (e: V2Emitted) => hashes.get(e) ?? hashes.set(e, v2DelegationHash(e)).get(e)!;

/** v2_event and v2_delegation rows of the events (any order: they are applied in chain order). */
export function v2Rows(chainId: number, emitted: readonly V2Emitted[]): Tables {
  const events: Row[] = [];
  const state = new Map<Hex, V2DelegationRow>();
  for (const e of [...emitted].sort(inOrder)) {
    const change = "amount" in e ? { amount: e.amount } : { enable: e.enable };
    const { insert, put } = v2Writes(placeOf(chainId, e), { key: e, hash: hashOf(e), change }, state.get(hashOf(e)));
    events.push(insert.v2Event);
    if (put.v2Delegation) state.set(put.v2Delegation.hash, put.v2Delegation);
  }
  return sqlRows([
    [schema.v2Event, events],
    [schema.v2Delegation, [...state.values()]],
  ]);
}

const TYPE = { DelegateForAll: "ALL", DelegateForContract: "CONTRACT", DelegateForToken: "TOKEN" } as const;

/** v1_event, the v1 state tables and the v1 change tables of the events (applied in chain order). */
export function v1Rows(chainId: number, emitted: readonly V1Emitted[]): Tables {
  const events: Row[] = [];
  const changes: Row[] = [];
  const versionChanges: Row[] = [];
  const delegations = new Map<string, V1DelegationRow>();
  /** Version counters by vault (the vault's own) or by "vault|delegate" (a pair's). */
  const counters = new Map<string, Row & { version: number }>();
  const version = (id: string) => counters.get(id)?.version ?? 0;
  for (const e of [...emitted].sort(inOrder)) {
    const place = placeOf(chainId, e);
    if (e.kind === "RevokeAllDelegates" || e.kind === "RevokeDelegate") {
      const pair = e.kind === "RevokeDelegate" ? { vault: e.vault, delegate: e.revoked } : undefined;
      const id = pair ? `${pair.vault}|${pair.delegate}` : e.vault;
      const { insert, put } = v1RevokeWrites(
        place,
        e.kind === "RevokeDelegate" ? { kind: e.kind, vault: e.vault, sender: e.sender, pair: pair! } : e,
        version(id),
      );
      counters.set(id, (put.v1PairVersion ?? put.v1VaultVersion)!);
      versionChanges.push(insert.v1VersionChange);
      events.push(insert.v1Event);
      continue;
    }
    const type = TYPE[e.kind];
    const key: V1Key = {
      type,
      vault: e.vault,
      delegate: e.delegate,
      contract: "contract" in e ? e.contract : zeroAddress,
      tokenId: "tokenId" in e ? e.tokenId : 0n,
    };
    const id = `${key.vault}|${key.delegate}|${type}|${key.contract}|${key.tokenId}`;
    const current = { vault: version(e.vault), pair: version(`${e.vault}|${e.delegate}`) };
    const { insert, put } = v1DelegateWrites(place, { key, value: e.value }, delegations.get(id), current);
    events.push(insert.v1Event);
    if (put.v1Delegation) delegations.set(id, put.v1Delegation);
    if (insert.v1DelegationChange) changes.push(insert.v1DelegationChange);
  }
  const counterRows = (pairs: boolean) => [...counters.values()].filter((c) => "delegate" in c === pairs);
  return sqlRows([
    [schema.v1Event, events],
    [schema.v1DelegationChange, changes],
    [schema.v1VersionChange, versionChanges],
    [schema.v1Delegation, [...delegations.values()]],
    [schema.v1VaultVersion, counterRows(false)],
    [schema.v1PairVersion, counterRows(true)],
  ]);
}

/**
 * Inserts the rows into the tables of `schema`, many rows per statement (one array parameter per
 * column, typed as the column is), with Ponder's triggers off as the indexer's own writes have them
 * (its reorganization and live-query bookkeeping is not the dataset's).
 */
export async function insertRows(client: pg.Client, schema: string, tables: Tables): Promise<void> {
  await client.query("BEGIN");
  await client.query("SET LOCAL session_replication_role = replica");
  for (const [table, rows] of tables) {
    if (rows.length === 0) continue;
    const { rows: types } = await client.query(
      "SELECT column_name, udt_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2",
      [schema, table],
    );
    const typeOf = new Map(types.map((t) => [t.column_name as string, t.udt_name as string]));
    const columns = Object.keys(rows[0]!);
    const missing = columns.filter((c) => !typeOf.has(c));
    if (missing.length) throw new Error(`${schema}.${table} has no column ${missing.join(", ")}`);
    const list = columns.map(quoteIdentifier).join(", ");
    const arrays = columns.map((c, i) => `$${i + 1}::${typeOf.get(c)}[]`).join(", ");
    for (const chunk of chunks(rows, 5_000)) {
      const values = columns.map((c) =>
        chunk.map((row) => (typeof row[c] === "bigint" ? (row[c] as bigint).toString() : (row[c] ?? null))),
      );
      await client.query(`INSERT INTO ${tableName(schema, table)} (${list}) SELECT * FROM unnest(${arrays})`, values);
    }
  }
  await client.query("COMMIT");
}
