import type { ChainEntry } from "../../core/chains";
import { table } from "../../core/sql";
import { type AccessDb, migrate, noRowsIfMissing } from "../database/db";
import { pgAccessDb } from "../database/pg";

/** Where a registry is, and the block its indexing starts from (null: not known yet). */
export type ServedRegistry = { address: string; startBlock: number | null };

/** A chain this instance serves, and the registries it indexes there. */
export type ServedChain = {
  id: number;
  name: string;
  title: string;
  testnet: boolean;
  v1?: ServedRegistry;
  v2?: ServedRegistry;
  /** The schema of the indexer that writes its tables, where it is not the one whose chains these are. */
  schema?: string;
};

/** How a chain is served: the table's names for it and the registries indexed there. */
export function servedChain(chain: ChainEntry, registries: { v1?: ServedRegistry; v2?: ServedRegistry }): ServedChain {
  return { id: chain.id, name: chain.name, title: chain.title, testnet: chain.testnet, ...registries };
}

/**
 * The chains an indexer serves (from its start-up plan: registries found and their start blocks),
 * published in the service's own tables under the indexer's schema name. API processes started
 * apart from the indexer (`npm run serve`) read them, so that every process serves the same chains
 * without asking an RPC.
 */
export async function publishServedChains(
  db: AccessDb,
  schema: string,
  indexerSchema: string,
  chains: readonly ServedChain[],
): Promise<void> {
  const served = table(schema, "served_chains");
  await migrate(db, schema, [
    `CREATE TABLE IF NOT EXISTS ${served}
       (indexer_schema text PRIMARY KEY, chains jsonb NOT NULL, published_at timestamptz NOT NULL DEFAULT now())`,
  ]);
  await db.query(
    `INSERT INTO ${served} (indexer_schema, chains) VALUES ($1, $2)
     ON CONFLICT (indexer_schema) DO UPDATE SET chains = excluded.chains, published_at = now()`,
    [indexerSchema, JSON.stringify(chains)],
  );
}

/** The chains the indexer writing `indexerSchema` serves; undefined until it has published them. */
export async function readServedChains(
  db: AccessDb,
  schema: string,
  indexerSchema: string,
): Promise<ServedChain[] | undefined> {
  const { rows } = await db
    .query(`SELECT chains FROM ${table(schema, "served_chains")} WHERE indexer_schema = $1`, [indexerSchema])
    // No such table yet: no indexer has published on this database.
    .catch(noRowsIfMissing);
  const chains = rows[0]?.chains;
  return chains === undefined
    ? undefined
    : ((typeof chains === "string" ? JSON.parse(chains) : chains) as ServedChain[]);
}

/**
 * The chains the indexer writing `indexerSchema` serves, once it has published them in the access
 * schema at `url`. It makes the access tables first, so a replica whose role may only use them (and
 * cannot make them) starts after they exist; until then, it says once why it waits.
 */
export async function publishedChains(url: string, schema: string, indexerSchema: string): Promise<ServedChain[]> {
  const db = pgAccessDb(url, { applicationName: "delegation-lookup replica start", max: 1 });
  let said: string | undefined;
  try {
    for (;;) {
      const chains = await readServedChains(db, schema, indexerSchema).catch((error: Error) => error.message);
      if (Array.isArray(chains)) return chains;
      const why = chains ?? "is `npm start` running on this database?";
      if (why !== said)
        console.log(`waiting for the indexer to publish the chains it serves (schema ${indexerSchema}): ${why}`);
      said = why;
      await new Promise((ok) => setTimeout(ok, 2_000));
    }
  } finally {
    await db.close();
  }
}
