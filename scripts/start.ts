/**
 * `npm start`: the service on the chains whose RPC URLs are set, or on Ethereum mainnet through its
 * public RPC when none is.
 *
 * It works out the plan (core/plan.ts: the chains, their RPC URLs, the registries found on each and
 * their start blocks, scripts/launcher/discovery.ts) and runs `ponder start` with it, handed over in
 * an environment variable: ponder.config.ts only declares it. It names the indexer's schema and the
 * views schema, where Ponder gives analysts' SQL names that outlive a re-index on a new schema.
 * Ponder cannot start while a chain's RPC is unreachable (its build asks every chain for its
 * finalized block), and it exits with code 75 when an RPC fails for good while running. So until the
 * plan is made and every chain's RPC answers `eth_chainId` with its chain, this waits with backoff,
 * answering on the service's port meanwhile that every chain is syncing, and says what fails; if
 * Ponder exits with 75 it waits again and restarts it (Ponder resumes from its checkpoint). Any other
 * exit ends this process with the same code. Before Ponder starts, it makes the Postgres roles API
 * replicas connect as, when REPLICA_DATABASE_URL or REPLICA_ACCESS_DATABASE_URL name them
 * (scripts/launcher/roles.ts), and on PGlite releases the lock a killed Ponder left
 * (scripts/launcher/dead-ponder.ts).
 *
 * The first attempt makes the plan, then asks each RPC its chain id: on a healthy start an RPC's
 * first requests are the start-block search's, and the chain ids check that each RPC serves its
 * chain. Once an attempt has failed, the chain ids are asked first, a quick check (5 s at most)
 * that spares a search bound to fail on an RPC that is down or hangs.
 */
import { servedChain } from "../api/store/served-chains";
import type { ChainEntry } from "../core/chains";
import type { IndexedChain } from "../core/plan";
import { launcherSettings, settingsOrExit } from "../core/settings";
import { PONDER_RETRYABLE_EXIT } from "../ponder/ponder-0.16.10";
import { runApart } from "./launcher/apart";
import { recordPonder, releaseDeadPonderLock } from "./launcher/dead-ponder";
import { planChains } from "./launcher/discovery";
import { nextWait, runPonder } from "./launcher/ponder";
import { forgetReplacedChains } from "./launcher/replaced-chains";
import { makeReplicaRoles } from "./launcher/roles";
import { whyChainUnreachable } from "./launcher/rpc";
import type { WaitingRoom } from "./launcher/waiting-room";

const settings = settingsOrExit(() => launcherSettings(process.env, process.argv.slice(2)));
const { chains, port, publicFallback } = settings;
if (settings.ignoredRpcVariables.length > 0) {
  console.warn(
    `${settings.ignoredRpcVariables.join(", ")}: not a chain id the service knows (see core/chains.ts), or a ` +
      "WebSocket URL for a chain without PONDER_RPC_URL_<id>; ignored",
  );
}
if (publicFallback) {
  // viem's public URL, which holds no key: printed whole, unlike the configured ones.
  console.warn(
    `No PONDER_RPC_URL_<chainId> is set: indexing ${publicFallback.title} (chain ${publicFallback.id}) through ` +
      `its public RPC ${publicFallback.publicRpc}. A public RPC is slow and rate-limited (a full backfill takes ` +
      "long, and v1 needs debug_traceTransaction, which public RPCs rarely serve): for real use set " +
      "PONDER_RPC_URL_1=<your provider's URL>. To see the service work in a minute with no internet, run " +
      "`npm run demo`.",
  );
}
// Ponder points the views at the schema once its backfill is done (docs/data-model.md).
const ponderArgs = ["--schema", settings.schema, "--views-schema", settings.viewsSchema];

/** What the waiting room serves: the table's registries, their start blocks not known yet. */
const served = chains.map(({ chain }) =>
  servedChain(chain, {
    v1: chain.v1 ? { address: chain.v1.address, startBlock: chain.v1.startBlock ?? null } : undefined,
    v2: { address: chain.v2.address, startBlock: chain.v2.startBlock ?? null },
  }),
);

/** The chains none of whose RPC URLs answer for them, each with every URL's reason. */
async function unreachableChains(): Promise<{ chain: ChainEntry; reasons: string[] }[]> {
  const probed = await Promise.all(
    chains.map(async (c) => ({ chain: c.chain, reasons: await whyChainUnreachable(c) })),
  );
  return probed.filter((p) => p.reasons.length > 0);
}

let stopping = false;
let waitingRoom: WaitingRoom | undefined;
let wake: (() => void) | undefined;

/** Sleeps, or less when a stop signal comes. */
function pause(seconds: number): Promise<void> {
  return new Promise((ok) => {
    wake = ok;
    setTimeout(ok, seconds * 1000);
  });
}

/** The plan, once it is made and every chain's RPC answers for its chain; undefined when stopping meanwhile. */
async function waitForPlan(): Promise<IndexedChain[] | undefined> {
  let delay = 1;
  let checkFirst = false;
  for (;;) {
    let down = checkFirst ? await unreachableChains() : [];
    const planned: { plan?: IndexedChain[]; why?: string } =
      down.length > 0
        ? {}
        : await planChains(chains, { memoryFile: settings.startBlocksFile }).then(
            (plan) => ({ plan }),
            (error: Error) => ({ why: error.message }),
          );
    if (!checkFirst && !stopping) down = await unreachableChains();
    checkFirst = true;
    if (stopping) break;
    if (down.length === 0 && planned.plan) {
      await waitingRoom?.close();
      waitingRoom = undefined;
      return planned.plan;
    }
    // Imported only when a chain is not reachable: it is the API's app, whose loading a healthy
    // start would only wait for.
    const { openWaitingRoom } = await import("./launcher/waiting-room");
    waitingRoom ??= await openWaitingRoom(port, served, settings).catch((error: NodeJS.ErrnoException) => {
      // Only a failure to listen is the port's fault (in use, or privileged); anything else is named as it is.
      const fix = error.syscall === "listen" ? ": set PORT or --port to a free port" : "";
      console.error(`Cannot answer on port ${port} (${error.message})${fix}.`);
      process.exit(1);
    });
    for (const { chain, reasons } of down) {
      console.error(
        `chain ${chain.id} (${chain.title}): cannot reach its RPC (${reasons.join("; ")}). Not indexing: the API ` +
          `answers chain_syncing on port ${port}. Trying again in ${delay} s. Fix: set ` +
          `PONDER_RPC_URL_${chain.id}=<a reachable RPC URL> (several may be given, comma-separated), or run ` +
          "`npm run demo` to try the service on a local chain with no internet.",
      );
    }
    if (down.length === 0 && planned.why !== undefined)
      console.error(
        `${planned.why} Not indexing yet: the API answers chain_syncing on port ${port}. Trying again in ${delay} s.`,
      );
    await pause(delay);
    delay = nextWait(delay);
  }
  await waitingRoom?.close();
  waitingRoom = undefined;
  return undefined;
}

/** The plan's chains with a registry; exits when there is none. */
function indexable(plan: IndexedChain[]): IndexedChain[] {
  const kept = plan.filter(({ chain, v1, v2 }) => {
    if (v1 === undefined && v2 === undefined)
      console.warn(`chain ${chain.id} (${chain.title}): neither registry is there; not indexed`);
    return v1 !== undefined || v2 !== undefined;
  });
  if (kept.length > 0) return kept;
  console.error("None of the configured chains has a registry deployed: nothing to index.");
  return process.exit(1);
}

// Every chain apart: a Ponder process per chain, and the API beside them (scripts/launcher/apart.ts).
if (settings.apart) process.exit(await runApart(settings));

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    stopping = true;
    wake?.();
  });
}

/** A run this long was healthy: a failure after it starts the restart backoff afresh. */
const HEALTHY_RUN_MS = 300_000;
let restartDelay = 0;
/** Says what failed before Ponder could start, and when it is tried again (later each time); undefined. */
function failedBeforePonder(what: string, error: Error): undefined {
  restartDelay = nextWait(restartDelay);
  console.error(`${what} (${error.message}); trying again in ${restartDelay} s.`);
  return undefined;
}

while (!stopping) {
  const planned = await waitForPlan();
  if (planned === undefined) break;
  const plan = indexable(planned);
  const local = plan.filter(({ chain }) => chain.local).map(({ chain, rpc }) => ({ id: chain.id, rpcUrls: rpc }));
  const roles = await makeReplicaRoles(settings).then(
    () => true,
    (error: Error) => failedBeforePonder("Cannot make the API replicas' Postgres roles", error),
  );
  const forgotten = roles
    ? await forgetReplacedChains(local, settings.database).catch((error: Error) =>
        failedBeforePonder("Cannot tell whether the local chains' fetched data is theirs", error),
      )
    : undefined;
  if (forgotten === undefined) {
    await pause(restartDelay);
    continue;
  }
  for (const id of forgotten) {
    console.warn(
      `chain ${id}: the blocks and logs fetched earlier are another chain's (it was started afresh); ` +
        "dropped them from Ponder's sync cache.",
    );
  }
  const released = await releaseDeadPonderLock(settings.database, settings.schema).catch((error: Error) => {
    console.warn(`Cannot tell whether the indexer before this one left its lock (${error.message}).`);
    return false;
  });
  if (released)
    console.warn(
      `The indexer before this one was killed: released its lock on schema ${settings.schema} rather than ` +
        "wait for it to expire.",
    );
  const started = Date.now();
  // Ponder listens on the launcher's port (--port or PORT), where the waiting room answered.
  const spawned = (pid: number | undefined) => recordPonder(settings.database, pid);
  const code = await runPonder({ plan, args: ponderArgs, port, spawned });
  if (stopping || code !== PONDER_RETRYABLE_EXIT) process.exit(code);
  restartDelay = Date.now() - started > HEALTHY_RUN_MS ? 1 : nextWait(restartDelay);
  console.error(
    `The indexer stopped after a failure worth retrying (exit ${code}, see above); restarting it in ${restartDelay} s.`,
  );
  await pause(restartDelay);
}
process.exit(0);
