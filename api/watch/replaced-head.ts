/**
 * The chain replacing the block the indexer is at. Ponder follows a reorganization by reverting
 * the replaced blocks' rows, but only once its own sync has noticed it, which can take many
 * seconds (it retries fetches by block hashes the node has forgotten); meanwhile the tables hold
 * the replaced branch, and every answer would be given from it. The watcher notes the hash the
 * chain gives for the indexer's block as that block becomes the indexed one, and asks again twice a
 * second (or, given the chain's WebSocket URL, at each new head it hears there: HEARD_CHAIN_CHECK_MS):
 * once the chain gives another hash there (or no longer reaches that height), the chain is marked
 * replaced, and every process answers 503 for it, until the indexer's block moves on.
 *
 * The chain's hash when the watcher first sees a block indexed may already be a replacement's (the
 * chain replaced it within that half second): so the watcher also compares the hash the indexer
 * wrote for the newest block it holds one for (its newest block with registry events, or, live,
 * chain_tip: every block's).
 */
import { sql } from "drizzle-orm";
import { createPublicClient, fallback, type Hex, http, type PublicClient, webSocket } from "viem";
import { type Execute, INDEXED_BLOCK_SQL, positionsSql, tableSql } from "../store/store";
import type { ChainAlarms } from "./chain-alarms";
import type { WatchedChain } from "./deep-reorg";

/** How often each chain's indexed block is compared with the chain's. */
export const REPLACED_HEAD_CHECK_MS = 500;
/**
 * A chain whose new heads are heard on its WebSocket URL is compared at each one (a replacement
 * always gives the chain a new newest block), and besides at least this often; every round while
 * it is marked replaced, or while its subscription is not heard from.
 */
export const HEARD_CHAIN_CHECK_MS = 5_000;

/** The indexed block, and the hash the chain gave for it when it became the indexed one. */
export type NotedBlock = { number: bigint; hash: Hex };

/** What the chain says at a block now: its hash there (null: none), and its newest block. */
export type ChainAt = { hash: Hex | null; head: bigint };

/**
 * Whether the chain replaced what the indexer is at: it no longer reaches the indexed block, or
 * gives another hash for it than when it became the indexed one (`noted`, if it is that block), or
 * another hash for the newest block whose hash the indexer wrote (`event`: the hash it indexed). A
 * block the chain does not give while reaching past it (an RPC behind another) proves nothing.
 */
export function isReplaced(
  block: bigint,
  at: ChainAt,
  noted: NotedBlock | undefined,
  event?: { indexed: NotedBlock; at: ChainAt },
): boolean {
  const differs = (hash: Hex | null, known: Hex) => hash !== null && hash.toLowerCase() !== known.toLowerCase();
  if (at.hash === null && at.head < block) return true;
  if (noted?.number === block && differs(at.hash, noted.hash)) return true;
  return event !== undefined && differs(event.at.hash, event.indexed.hash);
}

/** What a replaced chain's answers say. */
export const replacedDetail = (chainId: number, block: bigint) =>
  `chain ${chainId} replaced block ${block}, where the indexer is: its answers wait for the indexer to follow ` +
  "the new branch; ask again in a moment";

/** What the chain, whose newest block is `head`, gives at each of `numbers`. */
const chainAt = (client: PublicClient, numbers: bigint[], head: bigint) =>
  Promise.all(
    numbers.map(
      async (blockNumber): Promise<ChainAt> => ({
        hash:
          blockNumber > head
            ? null
            : await client.getBlock({ blockNumber }).then(
                (b) => b.hash,
                () => null,
              ),
        head,
      }),
    ),
  );

type Head = { number: bigint; hash: Hex };

/** Calls `onHead` at each new head the chain's WebSocket tells, noting in `chain.heard` whether it is heard from. */
function hearHeads(chain: { heard: boolean }, ws: string, onHead: (head: Head) => void): () => void {
  return createPublicClient({ transport: webSocket(ws) }).watchBlocks({
    poll: false,
    onBlock: ({ number, hash }) => {
      chain.heard = true;
      if (number !== null && hash !== null) onHead({ number, hash });
    },
    onError: () => {
      chain.heard = false;
    },
  });
}

/** Watches every chain (see the module's head) until `stop()`. */
export function watchReplacedHeads(options: {
  chains: readonly WatchedChain[];
  execute: Execute;
  schema: string;
  alarms: ChainAlarms;
  everyMs?: number;
}): { stop(): void } {
  const watched = options.chains.map((chain) => ({
    id: chain.id,
    ws: chain.ws,
    client: createPublicClient({ transport: fallback(chain.rpc.map((url) => http(url))) }) as PublicClient,
    noted: undefined as NotedBlock | undefined,
    /** The chain's newest block and the indexed block at the last round: while neither moves, nothing changed. */
    last: "",
    /** The checks of the chain, one after another; and whether one is waiting its turn. */
    checks: Promise.resolve(),
    waiting: false,
    checkedAt: 0,
    replaced: false,
    /** Whether its WebSocket subscription was last heard from rather than failing. */
    heard: false,
    /** The newest head heard and not yet checked: the chain's newest block, without asking for it. */
    heardHead: undefined as Head | undefined,
    unwatch: undefined as (() => void) | undefined,
  }));

  /** Every watched chain's indexed block: one statement a round for the schema, not one a chain. */
  async function positions(): Promise<Map<number, bigint>> {
    const { rows } = await options.execute(
      sql`SELECT c.chain_id, ${sql.raw(INDEXED_BLOCK_SQL)}::text AS block
        FROM ${sql.raw(positionsSql(options.schema))}`,
    );
    return new Map(rows.map((row) => [Number(row.chain_id), BigInt(row.block as string)]));
  }

  async function check(chain: (typeof watched)[number], block: bigint, head: Head | undefined) {
    const t = (name: string) => tableSql(options.schema, name);
    // Block 0: no registry event indexed yet (chain_head's value before any; on Postgres its setup
    // row is newer than the start checkpoint, which INDEXED_BLOCK_SQL reads as that empty state).
    // Nothing to compare, and the chain's genesis is no block the indexer reads.
    if (block === 0n) return;
    // One call a round while nothing moves: a replacement always gives the chain a new newest block.
    const latest = head ?? (await chain.client.getBlock({ blockTag: "latest" }));
    const now = `${latest.number}:${latest.hash}:${block}`;
    if (now === chain.last) return;
    // The newest block whose hash the indexer wrote, as it saw it: with registry events, or followed
    // live (chain_tip, by its time index: timestamps never decrease; even past the checkpoint, if the
    // indexer wrote it first: a replaced block written is as much a replaced branch).
    const [event] = (
      await options.execute(sql`
        SELECT e.number::text AS n, e.hash FROM (
          (SELECT block_number AS number, block_hash AS hash FROM ${t("v2_event")}
           WHERE chain_id = ${chain.id} AND block_number <= ${block.toString()}::bigint
           ORDER BY block_number DESC LIMIT 1)
          UNION ALL
          (SELECT block_number, block_hash FROM ${t("v1_event")}
           WHERE chain_id = ${chain.id} AND block_number <= ${block.toString()}::bigint
           ORDER BY block_number DESC LIMIT 1)
          UNION ALL
          (SELECT block_number, block_hash FROM ${t("chain_tip")} WHERE chain_id = ${chain.id}
           ORDER BY block_timestamp DESC, block_number DESC LIMIT 1)) e
        ORDER BY e.number DESC LIMIT 1`)
    ).rows;
    // Ordered by the number, not its text (where "5" is past "175").
    const indexed = event && { number: BigInt(event.n as string), hash: event.hash as Hex };
    const [at, atEvent] = await chainAt(chain.client, [block, ...(indexed ? [indexed.number] : [])], latest.number);
    const replaced = isReplaced(block, at!, chain.noted, indexed && { indexed, at: atEvent! });
    if (!replaced && chain.noted?.number !== block && at!.hash !== null)
      chain.noted = { number: block, hash: at!.hash };
    await options.alarms.markReplaced(chain.id, replaced ? replacedDetail(chain.id, block) : undefined);
    chain.replaced = replaced;
    chain.last = now;
  }

  /** Checks `chain` after its check under way (once, however often asked meanwhile). */
  function checkChain(chain: (typeof watched)[number], indexed?: Map<number, bigint>): Promise<void> {
    if (chain.waiting) return chain.checks;
    chain.waiting = true;
    chain.checks = chain.checks
      .then(async () => {
        chain.waiting = false;
        chain.checkedAt = Date.now();
        const head = chain.heardHead;
        chain.heardHead = undefined;
        const block = (indexed ?? (await positions())).get(chain.id);
        if (block !== undefined) await check(chain, block, head);
      })
      // One chain's RPC or the database failing is not evidence of anything: the next check asks again.
      .catch(() => {});
    return chain.checks;
  }

  for (const chain of watched) {
    if (!chain.ws) continue;
    chain.unwatch = hearHeads(chain, chain.ws, (head) => {
      chain.heardHead = head;
      void checkChain(chain);
    });
  }

  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const round = async () => {
    const now = Date.now();
    const due = watched.filter((c) => !c.heard || c.replaced || now - c.checkedAt >= HEARD_CHAIN_CHECK_MS);
    if (due.length > 0) {
      const indexed = await positions().catch(() => new Map<number, bigint>());
      await Promise.all(due.map((chain) => checkChain(chain, indexed)));
    }
    if (!stopped) timer = setTimeout(round, options.everyMs ?? REPLACED_HEAD_CHECK_MS);
  };
  timer = setTimeout(round, options.everyMs ?? REPLACED_HEAD_CHECK_MS);
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
      for (const chain of watched) chain.unwatch?.();
    },
  };
}
