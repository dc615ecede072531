/**
 * `npm start` with INDEX_CHAINS_APART=true (Postgres): every chain indexed by a `ponder start` of
 * its own, in a schema of its own (core/plan.ts, chainSchema), and the API served beside them by
 * `npm run serve`'s worker, which reads each chain from its schema (api/store/chain-schemas.ts).
 *
 * Each chain has a loop of its own here: wait until one of its RPC URLs answers for it, plan it
 * (its registries' start blocks), run its Ponder, and after any exit wait and run it again. So a
 * chain whose RPC is down at start, whose backfill is long, or whose indexer exits, holds no other
 * chain back: each goes live when its own Ponder is ready. Adding a chain adds a schema; the other
 * chains' Ponder builds are unchanged, so they resume from their checkpoints.
 *
 * The chains are published (with each one's schema) once every chain's first attempt to plan is
 * done, and the API starts then: a chain whose RPC did not answer is published with its start
 * blocks unknown (null), and answers `chain_syncing` until its Ponder is ready.
 *
 * A chain whose alarm is raised (a reorganization deeper than its finality depth) is indexed afresh
 * alone, its alarm cleared once its Ponder is ready again (scripts/launcher/reindex.ts).
 */
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { pgAccessDb } from "../../api/database/pg";
import { ChainSchemas } from "../../api/store/chain-schemas";
import { publishServedChains, type ServedChain, servedChain } from "../../api/store/served-chains";
import { makeIndexerTable } from "../../api/watch/chain-indexers";
import { chainSchema, INDEX_ONLY_VARIABLE, type IndexedChain, WATCH_VARIABLE } from "../../core/plan";
import type { ConfiguredChain, LauncherSettings } from "../../core/settings";
import { PONDER_RETRYABLE_EXIT } from "../../ponder/ponder-0.16.10";
import { planChains } from "./discovery";
import { IndexerNotes } from "./indexer-notes";
import { nextWait, ROOT, runPonder } from "./ponder";
import { Reindexer } from "./reindex";
import { forgetReplacedChains } from "./replaced-chains";
import { makeReplicaRoles } from "./roles";
import { whyChainUnreachable } from "./rpc";

/** The longest wait between two looks at an RPC that does not answer: it is back within this long of returning. */
const RPC_WAIT_MAX_S = 10;
/** A run this long was healthy: a failure after it starts the restart backoff afresh. */
const HEALTHY_RUN_MS = 300_000;

/** A free port on the loopback interface, for a chain's Ponder (its /ready and /metrics, no API). */
function freePort(): Promise<number> {
  return new Promise((found, failed) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => found(port));
    });
    server.once("error", failed);
  });
}

/** Why a chain is not planned when none of its RPC URLs answers for it. */
const UNREACHABLE = "cannot reach its RPC";

/** The chain's plan once its RPC answers and its registries' start blocks are known; else why not. */
async function planChain(configured: ConfiguredChain, memoryFile: string): Promise<IndexedChain | string> {
  const reasons = await whyChainUnreachable(configured);
  if (reasons.length > 0) return `${UNREACHABLE} (${reasons.join("; ")})`;
  return planChains([configured], { memoryFile }).then(
    ([plan]) => plan!,
    (error: Error) => error.message,
  );
}

/** How the chain is served before and after it is planned: its registries, its own schema. */
function served({ chain }: ConfiguredChain, plan: IndexedChain | undefined, schema: string): ServedChain {
  const unknown = (registry: false | { address: string; startBlock?: number }) =>
    registry ? { address: registry.address, startBlock: registry.startBlock ?? null } : undefined;
  const registries = plan ? { v1: plan.v1, v2: plan.v2 } : { v1: unknown(chain.v1), v2: unknown(chain.v2) };
  return { ...servedChain(chain, registries), schema: chainSchema(schema, chain.id) };
}

/** Runs the deployment until SIGINT or SIGTERM; the exit code. */
export async function runApart(settings: LauncherSettings): Promise<number> {
  const { chains, schema } = settings;
  let stopping = false;
  const wakes = new Set<() => void>();
  /** Sleeps, or less when a stop signal comes. */
  const pause = (seconds: number) =>
    new Promise<void>((ok) => {
      wakes.add(ok);
      setTimeout(() => {
        wakes.delete(ok);
        ok();
      }, seconds * 1000);
    });
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    process.on(signal, () => {
      stopping = true;
      for (const wake of wakes) wake();
    });

  const first = await Promise.all(chains.map((c) => planChain(c, settings.startBlocksFile)));
  const schemas = chains.map(({ chain }) => chainSchema(schema, chain.id));
  const views = chains.map(({ chain }) => chainSchema(settings.viewsSchema, chain.id));
  /** The reader's grants on every chain's schemas: again after a chain's are dropped to index it afresh. */
  const grantReaders = () => makeReplicaRoles({ ...settings, readSchemas: [...schemas, ...views] });
  const database = pgAccessDb(settings.database.url!, { applicationName: "delegation-lookup launcher", max: 1 });
  try {
    await grantReaders();
    const list = chains.map((c, i) => served(c, typeof first[i] === "string" ? undefined : first[i], schema));
    await publishServedChains(database, settings.access.schema, schema, list);
    await makeIndexerTable(database, settings.access.schema);
  } catch (error) {
    console.error(`Cannot publish the chains for the API (${(error as Error).message}).`);
    await database.close();
    return 1;
  }

  const reindexer = new Reindexer(database, {
    accessSchema: settings.access.schema,
    schemas: new ChainSchemas(new Map(chains.map(({ chain }, i) => [chain.id, schemas[i]!])), schema),
    viewsSchemaOf: (id) => chainSchema(settings.viewsSchema, id),
    grantReaders,
  });

  /** One chain's loop: its Ponder, run again after each exit, until stopping. */
  async function superviseChain(configured: ConfiguredChain, firstPlan: IndexedChain | string): Promise<void> {
    const { chain } = configured;
    const name = `chain ${chain.id} (${chain.title})`;
    let delay = 0;
    let planned: IndexedChain | string = firstPlan;
    const notes = new IndexerNotes(database, settings.access.schema, chainSchema(schema, chain.id), configured);
    while (!stopping) {
      if (typeof planned === "string") {
        notes.note("waiting", planned, planned.startsWith(UNREACHABLE) ? false : undefined);
        // Asked again every RPC_WAIT_MAX_S at most: one chain's probe costs the others nothing.
        delay = nextWait(delay, RPC_WAIT_MAX_S);
        console.error(`${name}: ${planned}. Not indexing it yet: trying again in ${delay} s.`);
        await pause(delay);
        if (!stopping) planned = await planChain(configured, settings.startBlocksFile);
        continue;
      }
      if (!planned.v1 && !planned.v2) {
        console.warn(`${name}: neither registry is there; not indexed`);
        notes.note("not indexed", "neither registry is on the chain", true);
        return;
      }
      const local = chain.local ? [{ id: chain.id, rpcUrls: configured.rpc }] : [];
      const forgotten = await forgetReplacedChains(local, settings.database).catch((error: Error) => error);
      if (forgotten instanceof Error) {
        planned = `cannot tell whether its fetched data is its own (${forgotten.message})`;
        continue;
      }
      const unprepared = await reindexer.prepare(chain.id, name);
      if (unprepared !== undefined) {
        planned = unprepared;
        continue;
      }
      const started = Date.now();
      const port = await freePort();
      const running = () => notes.note(reindexer.afresh(chain.id) ? "reindexing" : "running", null, true);
      const stop = reindexer.starting(chain.id, port, name, running);
      running();
      notes.probing(true);
      const code = await runPonder({
        plan: [planned],
        // Each its own views schema too: two indexers' views of the same tables cannot share one.
        args: [
          ...["--schema", chainSchema(schema, chain.id), "--views-schema", chainSchema(settings.viewsSchema, chain.id)],
          ...["--hostname", "127.0.0.1"],
        ],
        port,
        env: { [INDEX_ONLY_VARIABLE]: "true" },
        prefix: `[chain ${chain.id}] `,
        stop,
      });
      const afresh = reindexer.exited(chain.id);
      notes.probing(false);
      if (stopping) return;
      if (afresh) continue;
      notes.note("restarting", `its indexer exited (${code})`);
      delay = Date.now() - started > HEALTHY_RUN_MS ? 1 : nextWait(delay);
      const retryable = code === PONDER_RETRYABLE_EXIT ? "after a failure worth retrying" : "";
      console.error(`${name}: its indexer stopped ${retryable} (exit ${code}); restarting it in ${delay} s.`);
      await pause(delay);
      // Its RPC is asked again first: it may be what failed.
      planned = await planChain(configured, settings.startBlocksFile);
    }
  }

  const api = superviseApi(settings, { stopping: () => stopping, pause });
  await Promise.all(chains.map((c, i) => superviseChain(c, first[i]!)));
  reindexer.stop();
  await database.close();
  return api;
}

/** The API beside the indexers: `npm run serve` on the launcher's port, watching the chains' RPCs; 0 once stopping. */
async function superviseApi(
  settings: LauncherSettings,
  { stopping, pause }: { stopping: () => boolean; pause: (seconds: number) => Promise<void> },
): Promise<number> {
  let delay = 0;
  for (;;) {
    const env = {
      ...process.env,
      PORT: `${settings.port}`,
      DATABASE_SCHEMA: settings.schema,
      API_WORKERS: process.env.API_WORKERS ?? "1",
      [WATCH_VARIABLE]: "true",
    };
    const child = spawn("npm", ["run", "--silent", "serve"], { env, stdio: "inherit", cwd: ROOT });
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    process.on("SIGINT", forward).on("SIGTERM", forward);
    const code = await new Promise<number>((exited) => child.once("exit", (c) => exited(c ?? 1)));
    process.off("SIGINT", forward).off("SIGTERM", forward);
    if (stopping()) return 0;
    delay = nextWait(delay);
    console.error(`The API process exited (${code}); starting it again in ${delay} s.`);
    await pause(delay);
    if (stopping()) return 0;
  }
}
