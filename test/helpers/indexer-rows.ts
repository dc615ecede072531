/**
 * The rows the indexer writes for a stream of registry events, without a chain: every table of
 * ponder.schema.ts (the events, the state, and the v1 change tables), derived event by event with
 * core/'s rules as src/RegistryV1.ts and src/RegistryV2.ts apply them, so that the history and the
 * state always amount to the same thing. For datasets too large to write through a chain
 * (test/indexes.test.ts); nothing here decides what an answer should be.
 */
import type pg from "pg";
import { type Address, type Hex, toHex, zeroAddress } from "viem";
import { type V1State, v1NextState } from "../../core/v1";
import {
  isAmountType,
  V2_EVENT_NAME,
  type V2DelegationType,
  type V2State,
  v2DelegationHash,
  v2NextState,
} from "../../core/v2";
import { chunks } from "../../devkit/pool";
import type { Position } from "./position";

/** A v2 event: the write that emitted it, at its position. */
export type V2Emitted = Position & {
  type: V2DelegationType;
  from: Address;
  to: Address;
  rights: Hex;
  contract?: Address;
  tokenId?: bigint;
} & ({ enable: boolean } | { amount: bigint });

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
/** Rows by table name. */
export type Tables = Map<string, Row[]>;

const inOrder = (a: Position, b: Position) =>
  a.block === b.block ? a.logIndex - b.logIndex : a.block < b.block ? -1 : 1;

/** The columns every event row has: its id, chain, block (with a made-up hash and time) and log. */
function eventColumns(chainId: number, e: Position) {
  return {
    id: `${chainId}-${e.block}-${e.logIndex}`,
    chain_id: chainId,
    block_number: e.block,
    block_hash: toHex(e.block, { size: 32 }),
    block_timestamp: 1_600_000_000n + e.block * 12n,
    transaction_hash: toHex((e.block << 16n) + BigInt(e.logIndex), { size: 32 }),
    log_index: e.logIndex,
  };
}

/** Each event's delegation hash, once: a dataset is made into rows again at each block a test reads it at. */
const hashes = new WeakMap<V2Emitted, Hex>();
const hashOf = (e: V2Emitted) => hashes.get(e) ?? hashes.set(e, v2DelegationHash(e)).get(e)!;

/** v2_event and v2_delegation rows of the events (any order: they are applied in chain order). */
export function v2Rows(chainId: number, emitted: readonly V2Emitted[]): Tables {
  const events: Row[] = [];
  const state = new Map<Hex, Row & V2State>();
  for (const e of [...emitted].sort(inOrder)) {
    const hash = hashOf(e);
    events.push({
      ...eventColumns(chainId, e),
      kind: V2_EVENT_NAME[e.type],
      hash,
      from: e.from,
      to: e.to,
      contract: e.contract ?? null,
      token_id: e.tokenId ?? null,
      rights: e.rights,
      amount: "amount" in e ? e.amount : null,
      enable: "enable" in e ? e.enable : null,
    });
    const prev = state.get(hash);
    const next = v2NextState(e.type, prev, "amount" in e ? { amount: e.amount } : { enable: e.enable });
    if (prev) {
      Object.assign(prev, { ...next, updated_block: e.block, event_count: (prev.event_count as number) + 1 });
    } else if (next) {
      state.set(hash, {
        ...next,
        chain_id: chainId,
        hash,
        delegation_type: e.type,
        from: e.from,
        to: e.to,
        contract: e.contract ?? null,
        token_id: e.tokenId ?? null,
        rights: e.rights,
        first_block: e.block,
        first_log_index: e.logIndex,
        updated_block: e.block,
        event_count: 1,
      });
    }
  }
  const delegations = [...state.values()].map(({ enabled, amount, ...row }) => ({
    ...row,
    enabled,
    amount: isAmountType(row.delegation_type as V2DelegationType) ? amount : null,
  }));
  return new Map([
    ["v2_event", events],
    ["v2_delegation", delegations],
  ]);
}

/** A v1 key's columns, as v1_delegation and v1_delegation_change key it. */
type V1KeyColumns = {
  chain_id: number;
  vault: Address;
  delegate: Address;
  type: string;
  contract: Address;
  token_id: bigint;
};

/** A v1 state's columns. */
const stateColumns = (s: V1State) => ({
  enabled: s.enabled,
  vault_version: s.vaultVersion,
  pair_version: s.pairVersion,
  created_block: s.createdBlock,
  created_log_index: s.createdLogIndex,
});

/** v1_event, the v1 state tables and the v1 change tables of the events (applied in chain order). */
export function v1Rows(chainId: number, emitted: readonly V1Emitted[]): Tables {
  const events: Row[] = [];
  const changes: Row[] = [];
  const versionChanges: Row[] = [];
  const delegations = new Map<string, { key: V1KeyColumns; state: V1State; updatedBlock: bigint }>();
  /** Version counters by vault (the vault's own) or by "vault|delegate" (a pair's). */
  const counters = new Map<string, Row & { version: number }>();
  const version = (id: string) => counters.get(id)?.version ?? 0;
  for (const e of [...emitted].sort(inOrder)) {
    const base = eventColumns(chainId, e);
    const event = { ...base, vault: e.vault, delegate: null, contract: null, token_id: null, value: null };
    if (e.kind === "RevokeAllDelegates" || e.kind === "RevokeDelegate") {
      const delegate = e.kind === "RevokeDelegate" ? e.revoked : null;
      const id = delegate === null ? e.vault : `${e.vault}|${delegate}`;
      const counter = counters.get(id) ?? { chain_id: chainId, vault: e.vault, version: 0 };
      if (delegate !== null) counter.delegate = delegate;
      counter.version++;
      counter.updated_block = e.block;
      counters.set(id, counter);
      versionChanges.push({
        id: base.id,
        chain_id: chainId,
        block_number: e.block,
        log_index: e.logIndex,
        vault: e.vault,
        delegate,
        version: counter.version,
      });
      events.push(
        e.kind === "RevokeDelegate"
          ? { ...event, kind: e.kind, delegate: e.sender, revoked_delegate: e.revoked }
          : { ...event, kind: e.kind, revoked_delegate: null },
      );
      continue;
    }
    const key: V1KeyColumns = {
      chain_id: chainId,
      vault: e.vault,
      delegate: e.delegate,
      type: e.kind === "DelegateForAll" ? "ALL" : e.kind === "DelegateForContract" ? "CONTRACT" : "TOKEN",
      contract: e.kind === "DelegateForAll" ? zeroAddress : e.contract,
      token_id: e.kind === "DelegateForToken" ? e.tokenId : 0n,
    };
    const id = Object.values(key).join("|");
    const current = { vault: version(e.vault), pair: version(`${e.vault}|${e.delegate}`) };
    const next = v1NextState(delegations.get(id)?.state, e.value, current, e);
    if (next) {
      delegations.set(id, { key, state: next, updatedBlock: e.block });
      changes.push({ id: base.id, block_number: e.block, log_index: e.logIndex, ...key, ...stateColumns(next) });
    }
    events.push({
      ...event,
      kind: e.kind,
      delegate: e.delegate,
      contract: e.kind === "DelegateForAll" ? null : e.contract,
      token_id: e.kind === "DelegateForToken" ? e.tokenId : null,
      value: e.value,
      revoked_delegate: null,
    });
  }
  const counterRows = (pairs: boolean) => [...counters.values()].filter((c) => "delegate" in c === pairs);
  return new Map([
    ["v1_event", events],
    ["v1_delegation_change", changes],
    ["v1_version_change", versionChanges],
    [
      "v1_delegation",
      [...delegations.values()].map((d) => ({ ...d.key, ...stateColumns(d.state), updated_block: d.updatedBlock })),
    ],
    ["v1_vault_version", counterRows(false)],
    ["v1_pair_version", counterRows(true)],
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
    const list = columns.map((c) => `"${c}"`).join(", ");
    const arrays = columns.map((c, i) => `$${i + 1}::${typeOf.get(c)}[]`).join(", ");
    for (const chunk of chunks(rows, 5_000)) {
      const values = columns.map((c) =>
        chunk.map((row) => (typeof row[c] === "bigint" ? (row[c] as bigint).toString() : (row[c] ?? null))),
      );
      await client.query(`INSERT INTO "${schema}"."${table}" (${list}) SELECT * FROM unnest(${arrays})`, values);
    }
  }
  await client.query("COMMIT");
}
