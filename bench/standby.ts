/**
 * The change feed's delays in a deployment with a standby, as docker-compose.scale.yml makes it: a
 * private Postgres primary (WAL flushed every 20 ms, as there) with the indexer on it, a hot standby
 * made from it by `pg_basebackup -R`, and `npm run serve` reading the standby (its keys on the
 * primary). The figures (bench/delay.ts): from each new delegation's block to the replica's first
 * `true`, to the event of a stream on npm start and of one on the replica (the standby's replay in
 * between), and to the first attempt of a webhook delivery carrying it (npm start's deliverer).
 */
import pg from "pg";
import { startPrivatePostgres } from "../devkit/postgres";
import type { Cleanup } from "./cleanup";
import { measureDelays, webhookArrivals } from "./delay";
import type { BenchOptions } from "./options";
import { CHAIN_ID, startChain, startIndexer, startServe } from "./stack";

export type StandbyFigures = {
  samples: number;
  answered: number[];
  /** To the event of npm start's stream, and of the replica's. */
  streamed: { start: number[]; standby: number[] };
  delivered: number[];
};

export async function measureStandby(
  o: BenchOptions,
  cleanup: Cleanup,
  log: (line: string) => void,
): Promise<StandbyFigures> {
  const primary = await startPrivatePostgres({ settings: { wal_writer_delay: "20ms" } });
  cleanup.add("the primary Postgres", async () => primary.destroy());
  // Made before the indexer writes anything: its schemas and rows all come by streaming.
  const standby = await startPrivatePostgres({ standbyOf: primary });
  cleanup.add("the standby Postgres", async () => standby.destroy());
  const chain = await startChain(cleanup);
  // Its webhook endpoint is on loopback.
  const indexer = await startIndexer(cleanup, chain, { DATABASE_URL: primary.url, WEBHOOK_ALLOW_PRIVATE: "true" });
  const replica = await startServe(cleanup, indexer, "standby", {
    DATABASE_URL: standby.url,
    ACCESS_DATABASE_URL: primary.url,
  });
  // An endpoint for the chain's v2 entries from now on.
  const webhook = await webhookArrivals(indexer, `chainId=${CHAIN_ID}&version=v2`, cleanup);
  const streams = [indexer.url, replica.url];
  const delays = await measureDelays(
    chain,
    replica.url,
    indexer.headers,
    o.standbySamples,
    o.seed + 16,
    streams,
    webhook,
  );
  // The figures are a standby's only if the replica's database was one, streaming, throughout.
  const client = new pg.Client({ connectionString: standby.url });
  await client.connect();
  try {
    const sql = "SELECT pg_is_in_recovery() AS recovering, (SELECT status FROM pg_stat_wal_receiver) AS receiver";
    const [state] = (await client.query<{ recovering: boolean; receiver: string | null }>(sql)).rows;
    if (!state?.recovering || state.receiver !== "streaming")
      throw new Error(`the replica's database is not a streaming standby: ${JSON.stringify(state)}`);
  } finally {
    await client.end();
  }
  log(`standby: ${delays.answered.length} delegations answered and streamed by npm run serve on the standby`);
  const streamed = { start: delays.streamed[indexer.url]!, standby: delays.streamed[replica.url]! };
  return { samples: o.standbySamples, answered: delays.answered, streamed, delivered: delays.delivered };
}
