/**
 * `npm start` with INDEX_CHAINS_APART=true (Postgres): every chain indexed by a `ponder start` of
 * its own, in a schema of its own (core/plan.ts, chainSchema) — or, for the chains INDEX_CHAIN_GROUPS
 * puts together, by one per group, in the group's schema — and the API served beside them by
 * `npm run serve`'s worker, which reads each chain from its schema (api/store/chain-schemas.ts).
 *
 * Each group (most often a chain alone) has a loop of its own here: wait until one of each chain's
 * RPC URLs answers for it, plan its chains (their registries' start blocks), run its Ponder, and
 * after any exit wait and run it again. So a chain whose RPC is down at start, whose backfill is
 * long, or whose indexer exits, holds no chain of another group back: each group goes live when its
 * own Ponder is ready. A group shares one process's memory, and so one fate: its chains wait for
 * each other's RPCs and backfills. Adding a chain alone adds a schema; the other Ponder builds are
 * unchanged, so they resume from their checkpoints (a group's build changes with its chains).
 *
 * The chains are published (with each one's schema) once every chain's first attempt to plan is
 * done, and the API starts then: a chain whose RPC did not answer is published with its start
 * blocks unknown (null), and answers `chain_syncing` until its Ponder is ready.
 *
 * A chain whose alarm is raised (a reorganization deeper than its finality depth) is indexed afresh
 * alone, with its group, its alarm cleared once its Ponder is ready again (scripts/launcher/reindex.ts).
 */
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import type { AccessDb } from "../../api/database/db";
import { pgAccessDb } from "../../api/database/pg";
import { ChainSchemas } from "../../api/store/chain-schemas";
import { publishServedChains, type ServedChain, servedChain } from "../../api/store/served-chains";
import { makeIndexerTable } from "../../api/watch/chain-indexers";
import { chainSchema, INDEX_ONLY_VARIABLE, type IndexedChain, WATCH_VARIABLE } from "../../core/plan";
import type { ConfiguredChain, LauncherSettings } from "../../core/settings";
import { PONDER_RETRYABLE_EXIT } from "../../ponder/ponder-0.16.10";
import { planChains } from "./discovery";
import { GroupNotes, IndexerNotes } from "./indexer-notes";
import { nextWait, ROOT, runPonder } from "./ponder";
import { type IndexerGroup, Reindexer } from "./reindex";
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

/** How the chain is served before and after it is planned: its registries, its indexer's schema. */
function served({ chain }: ConfiguredChain, plan: IndexedChain | undefined, schema: string): ServedChain {
  const unknown = (registry: false | { address: string; startBlock?: number }) =>
    registry ? { address: registry.address, startBlock: registry.startBlock ?? null } : undefined;
  const registries = plan ? { v1: plan.v1, v2: plan.v2 } : { v1: unknown(chain.v1), v2: unknown(chain.v2) };
  return { ...servedChain(chain, registries), schema };
}

/** Runs the deployment until SIGINT or SIGTERM; the exit code. */
export async function runApart(settings: LauncherSettings): Promise<number> {
  const { chains, schema } = settings;
  const { stopped, pause } = stopSignals();

  const byId = new Map(chains.map((c) => [c.chain.id, c]));
  const groups = settings.groups.map((ids) => indexerGroup(ids.map((id) => byId.get(id)!)));
  const first = new Map(
    await Promise.all(chains.map(async (c) => [c.chain.id, await planChain(c, settings.startBlocksFile)] as const)),
  );
  const schemaOf = new Map(groups.flatMap((g) => g.chainIds.map((id) => [id, chainSchema(schema, g.key)] as const)));
  const viewsOf = (group: IndexerGroup) => chainSchema(settings.viewsSchema, group.key);
  /** The reader's grants on every group's schemas: again after a group's are dropped to index it afresh. */
  const grantReaders = () =>
    makeReplicaRoles({ ...settings, readSchemas: groups.flatMap((g) => [schemaOf.get(g.key)!, viewsOf(g)]) });
  const database = pgAccessDb(settings.database.url!, { applicationName: "delegation-lookup launcher", max: 1 });
  const publication = new Publication(database, settings, (c, plan) => served(c, plan, schemaOf.get(c.chain.id)!));
  try {
    await grantReaders();
    await publication.publish(chains.map((c) => [c, planned(first.get(c.chain.id)!)]));
    await makeIndexerTable(database, settings.access.schema);
  } catch (error) {
    console.error(`Cannot publish the chains for the API (${(error as Error).message}).`);
    await database.close();
    return 1;
  }

  const reindexer = new Reindexer(database, {
    accessSchema: settings.access.schema,
    schemas: new ChainSchemas(schemaOf, schema),
    groups,
    viewsSchemaOf: viewsOf,
    grantReaders,
  });

  /** One group's loop: its Ponder, run again after each exit, until stopping. */
  async function superviseGroup(group: IndexerGroup): Promise<void> {
    const configured = group.chainIds.map((id) => byId.get(id)!);
    let delay = 0;
    let plans = group.chainIds.map((id) => first.get(id)!);
    const notes = new GroupNotes(
      configured.map((c) => new IndexerNotes(database, settings.access.schema, schemaOf.get(group.key)!, c)),
    );
    const note = notes.note.bind(notes);
    while (!stopped()) {
      const unplanned = plans.findIndex((plan) => typeof plan === "string");
      if (unplanned >= 0) {
        const why = plans[unplanned] as string;
        const whose = group.chainIds.length > 1 ? `chain ${group.chainIds[unplanned]} of its group: ` : "";
        note("waiting", `${whose}${why}`, why.startsWith(UNREACHABLE) ? false : undefined);
        // Asked again every RPC_WAIT_MAX_S at most: one group's probe costs the others nothing.
        delay = nextWait(delay, RPC_WAIT_MAX_S);
        console.error(`${group.name}: ${whose}${why}. Not indexing it yet: trying again in ${delay} s.`);
        await pause(delay);
        if (!stopped()) plans = await planGroup(configured, settings.startBlocksFile);
        continue;
      }
      // Chains published before their RPCs answered: their start blocks are known now.
      publication.planned(configured, plans as IndexedChain[]);
      const plan = (plans as IndexedChain[]).filter((p) => p.v1 || p.v2);
      if (plan.length === 0) {
        console.warn(`${group.name}: neither registry is there; not indexed`);
        note("not indexed", "neither registry is on the chain", true);
        return;
      }
      const local = configured.filter((c) => c.chain.local).map((c) => ({ id: c.chain.id, rpcUrls: c.rpc }));
      const forgotten = await forgetReplacedChains(local, settings.database).catch((error: Error) => error);
      const unprepared =
        forgotten instanceof Error
          ? `cannot tell whether its fetched data is its own (${forgotten.message})`
          : await reindexer.prepare(group);
      if (unprepared !== undefined) {
        plans = plans.map(() => unprepared);
        continue;
      }
      const started = Date.now();
      const port = await freePort();
      const running = () => note(reindexer.afresh(group) ? "reindexing" : "running", null, true);
      const stop = reindexer.starting(group, port, running);
      running();
      notes.probing(port);
      const code = await runPonder({
        plan,
        // Each its own views schema too: two indexers' views of the same tables cannot share one.
        args: [
          ...["--schema", schemaOf.get(group.key)!, "--views-schema", viewsOf(group)],
          ...["--hostname", "127.0.0.1"],
        ],
        port,
        env: { [INDEX_ONLY_VARIABLE]: "true" },
        prefix: `[chain ${group.chainIds.join("+")}] `,
        stop,
      });
      const afresh = reindexer.exited(group);
      notes.probing(undefined);
      if (stopped()) return;
      if (afresh) continue;
      note("restarting", `its indexer exited (${code})`);
      delay = Date.now() - started > HEALTHY_RUN_MS ? 1 : nextWait(delay);
      const retryable = code === PONDER_RETRYABLE_EXIT ? "after a failure worth retrying" : "";
      console.error(`${group.name}: its indexer stopped ${retryable} (exit ${code}); restarting it in ${delay} s.`);
      await pause(delay);
      // Its RPCs are asked again first: one may be what failed.
      plans = await planGroup(configured, settings.startBlocksFile);
    }
  }

  const api = superviseApi(settings, { stopped, pause });
  await Promise.all(groups.map(superviseGroup));
  reindexer.stop();
  await database.close();
  return api;
}

/**
 * The chains as published for the API processes (api/store/served-chains.ts): at first, a chain
 * whose RPC did not answer with its start blocks unknown; published again once it is planned.
 */
class Publication {
  private readonly list = new Map<number, ServedChain>();
  private readonly unknown = new Set<number>();
  private last: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: AccessDb,
    private readonly settings: LauncherSettings,
    private readonly served: (c: ConfiguredChain, plan: IndexedChain | undefined) => ServedChain,
  ) {}

  /** Publishes the chains, each as planned or not yet (undefined). */
  publish(chains: readonly (readonly [ConfiguredChain, IndexedChain | undefined])[]): Promise<void> {
    for (const [c, plan] of chains) {
      this.list.set(c.chain.id, this.served(c, plan));
      if (plan === undefined) this.unknown.add(c.chain.id);
      else this.unknown.delete(c.chain.id);
    }
    // One after another: each writes the whole list as it is when it runs.
    this.last = this.last
      .catch(() => undefined)
      .then(() =>
        publishServedChains(this.db, this.settings.access.schema, this.settings.schema, [...this.list.values()]),
      );
    return this.last;
  }

  /** The group's chains are planned: published again if any was published unplanned (failure logged). */
  planned(configured: readonly ConfiguredChain[], plans: readonly IndexedChain[]): void {
    if (!configured.some((c) => this.unknown.has(c.chain.id))) return;
    this.publish(configured.map((c, i) => [c, plans[i]])).catch((error: Error) => {
      for (const c of configured) this.unknown.add(c.chain.id);
      console.error(`Cannot publish the chains' start blocks for the API (${error.message}).`);
    });
  }
}

/** Whether SIGINT or SIGTERM came; and a sleep cut short by one. */
function stopSignals(): { stopped: () => boolean; pause: (seconds: number) => Promise<void> } {
  let stopping = false;
  const wakes = new Set<() => void>();
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    process.on(signal, () => {
      stopping = true;
      for (const wake of wakes) wake();
    });
  const pause = (seconds: number) =>
    new Promise<void>((ok) => {
      wakes.add(ok);
      setTimeout(() => {
        wakes.delete(ok);
        ok();
      }, seconds * 1000);
    });
  return { stopped: () => stopping, pause };
}

/** The chains of one indexer, told by the lowest id, named for the log. */
function indexerGroup(configured: readonly ConfiguredChain[]): IndexerGroup {
  const chainIds = configured.map((c) => c.chain.id);
  const names = configured.map(({ chain }) => `${chain.id} (${chain.title})`);
  return { key: chainIds[0]!, chainIds, name: `${names.length > 1 ? "chains" : "chain"} ${names.join(", ")}` };
}

const planned = (plan: IndexedChain | string) => (typeof plan === "string" ? undefined : plan);

/** Each chain's plan, or why not (planChain), the chains asked at once. */
const planGroup = (configured: readonly ConfiguredChain[], memoryFile: string) =>
  Promise.all(configured.map((c) => planChain(c, memoryFile)));

/** The API beside the indexers: `npm run serve` on the launcher's port, watching the chains' RPCs; 0 once stopping. */
async function superviseApi(
  settings: LauncherSettings,
  { stopped, pause }: ReturnType<typeof stopSignals>,
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
    if (stopped()) return 0;
    delay = nextWait(delay);
    console.error(`The API process exited (${code}); starting it again in ${delay} s.`);
    await pause(delay);
    if (stopped()) return 0;
  }
}
