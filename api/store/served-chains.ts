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

/** Whether a chain was published before its registries' start blocks were known (its RPC had not answered). */
export const startUnknown = (chain: ServedChain) => [chain.v1, chain.v2].some((r) => r?.startBlock === null);

/**
 * Takes, in place, the registries of chains published with their start blocks unknown from a later
 * publication that knows them; whether any chain's are still unknown.
 */
export function learnRegistries(chains: ServedChain[], published: readonly ServedChain[]): boolean {
  for (const chain of chains) {
    const later = published.find((p) => p.id === chain.id);
    if (!startUnknown(chain) || later === undefined || startUnknown(later)) continue;
    for (const version of ["v1", "v2"] as const)
      if (later[version] === undefined) delete chain[version];
      else chain[version] = later[version];
  }
  return chains.some(startUnknown);
}

/** How often an API process reads the published chains again while a chain's start blocks are unknown. */
export const PUBLICATION_READ_MS = 5_000;

/**
 * While a chain's start blocks are unknown, reads the chains published for `indexerSchema` again
 * every `everyMs` and learns them (learnRegistries): where chains are indexed apart, a chain whose
 * RPC answered late is published again once planned (scripts/launcher/apart.ts).
 */
export function followPublishedChains(
  url: string,
  o: { schema: string; indexerSchema: string; chains: ServedChain[]; everyMs?: number },
): { stop(): Promise<void> } {
  if (!o.chains.some(startUnknown)) return { stop: async () => undefined };
  const db = pgAccessDb(url, { applicationName: "delegation-lookup replica chains", max: 1 });
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const everyMs = o.everyMs ?? PUBLICATION_READ_MS;
  const round = async () => {
    const published = await readServedChains(db, o.schema, o.indexerSchema).catch(() => undefined);
    const unknown = published === undefined || learnRegistries(o.chains, published);
    if (stopped) return;
    if (unknown) timer = setTimeout(round, everyMs);
    else await db.close();
  };
  timer = setTimeout(round, everyMs);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await db.close().catch(() => undefined);
    },
  };
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
