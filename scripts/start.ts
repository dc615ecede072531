/**
 * `npm start`: the service on the chains whose RPC URLs are set, or on Ethereum mainnet through its
 * public RPC when none is.
 *
 * Ponder cannot start while a chain's RPC is unreachable (its build asks every chain for its
 * finalized block), and it exits with code 75 when an RPC fails for good while running. So this
 * waits for the RPCs with backoff, answering on the service's port meanwhile that every chain is
 * syncing, then runs `ponder start`; if that exits with 75 it waits again and restarts it (Ponder
 * resumes from its checkpoint). Any other exit ends this process with the same code.
 */
import { spawn } from "node:child_process";
import { constants } from "node:os";
import { resolve } from "node:path";
import type { ServedChain } from "../api/app";
import { type ChainEntry, configuredChains, rpcUrls, withPublicRpcFallback } from "../core/chains";
import { planChains, startBlocksFile } from "../core/discovery";
import { forgetReplacedChains } from "./launcher/replaced-chains";
import { whyRpcUnusable } from "./launcher/rpc";
import { openWaitingRoom, type WaitingRoom } from "./launcher/waiting-room";

const PONDER = resolve(import.meta.dirname, "../node_modules/.bin/ponder");
/** Ponder's exit code for a failure worth retrying (an RPC that kept failing). */
const RETRYABLE_EXIT = 75;
const MAX_WAIT_S = 60;

const { env, publicFallback } = withPublicRpcFallback({ PONDER_TELEMETRY_DISABLED: "true", ...process.env });
if (publicFallback) {
  console.warn(
    `No PONDER_RPC_URL_<chainId> is set: indexing ${publicFallback.title} (chain ${publicFallback.id}) through its public RPC ` +
      `${env.PONDER_RPC_URL_1}. A public RPC is slow and rate-limited (a full backfill takes long, and v1 needs ` +
      `debug_traceTransaction, which public RPCs rarely serve): for real use set PONDER_RPC_URL_1=<your provider's URL>. ` +
      "To see the service work in a minute with no internet, run `npm run demo`.",
  );
}
const chains = configuredChains(env);

const args = process.argv.slice(2);
const portArg = args.findIndex((a) => a === "--port" || a === "-p");
const port = Number(portArg >= 0 ? args[portArg + 1] : (env.PORT ?? 42069));
if (!args.includes("--schema")) args.push("--schema", env.DATABASE_SCHEMA || "delegations");

/** What the waiting room serves: the table's registries, their start blocks not known yet. */
const served: ServedChain[] = chains.map((c: ChainEntry) => ({
  id: c.id,
  name: c.name,
  title: c.title,
  testnet: c.testnet,
  v1: c.v1 ? { address: c.v1.address, startBlock: c.v1.startBlock ?? null } : undefined,
  v2: { address: c.v2.address, startBlock: c.v2.startBlock ?? null },
}));

/** The chains none of whose RPC URLs answer for them, each with every URL's reason. */
async function unreachableChains(): Promise<{ chain: ChainEntry; reasons: string[] }[]> {
  const probed = await Promise.all(
    chains.map(async (chain) => {
      const urls = rpcUrls(chain.id, env);
      const reasons = await Promise.all(
        urls.map(async (url) => {
          const why = await whyRpcUnusable(url, chain.id);
          return why === undefined ? undefined : `${url}: ${why}`;
        }),
      );
      return { chain, reasons: reasons.some((r) => r === undefined) ? [] : (reasons as string[]) };
    }),
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

/**
 * The registries' start blocks, found now (and remembered for Ponder's config, which then asks the
 * chains nothing more): a rate-limited or pruned RPC fails here, where it is retried, rather than
 * in Ponder's build, which would exit. Undefined when found; else why not.
 */
const whyNoStartBlocks = () =>
  planChains(chains, { memoryFile: startBlocksFile(env), env }).then(
    () => undefined,
    (error: Error) => error.message,
  );

/**
 * Until every chain's RPC answers and the registries' start blocks are known: says what fails and
 * how to fix it, with backoff.
 */
async function waitForRpcs(): Promise<void> {
  let delay = 1;
  for (;;) {
    const down = await unreachableChains();
    const why = down.length === 0 && !stopping ? await whyNoStartBlocks() : undefined;
    if ((down.length === 0 && why === undefined) || stopping) break;
    waitingRoom ??= await openWaitingRoom(port, served, env).catch((error: NodeJS.ErrnoException) => {
      // Only a failure to listen is the port's fault (in use, or privileged); anything else is named as it is.
      const fix = error.syscall === "listen" ? ": set PORT or --port to a free port" : "";
      console.error(`Cannot answer on port ${port} (${error.message})${fix}.`);
      process.exit(1);
    });
    for (const { chain, reasons } of down) {
      console.error(
        `chain ${chain.id} (${chain.title}): cannot reach its RPC (${reasons.join("; ")}). Not indexing: the API answers ` +
          `chain_syncing on port ${port}. Trying again in ${delay} s. Fix: set PONDER_RPC_URL_${chain.id}=<a reachable RPC URL> ` +
          "(several may be given, comma-separated), or run `npm run demo` to try the service on a local chain with no internet.",
      );
    }
    if (why !== undefined)
      console.error(
        `${why} Not indexing yet: the API answers chain_syncing on port ${port}. Trying again in ${delay} s.`,
      );
    await pause(delay);
    delay = Math.min(delay * 2, MAX_WAIT_S);
  }
  await waitingRoom?.close();
  waitingRoom = undefined;
}

/** Runs `ponder start` until it exits; its exit code. */
function runPonder(): Promise<number> {
  const child = spawn(PONDER, ["start", ...args], { env, stdio: "inherit", cwd: resolve(import.meta.dirname, "..") });
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  process.on("SIGINT", forward).on("SIGTERM", forward);
  return new Promise((exited) =>
    child.once("exit", (code, signal) => {
      process.off("SIGINT", forward).off("SIGTERM", forward);
      exited(code ?? 128 + (signal ? constants.signals[signal] : 0));
    }),
  );
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    stopping = true;
    wake?.();
  });
}

/** A run this long was healthy: a failure after it starts the restart backoff afresh. */
const HEALTHY_RUN_MS = 300_000;
let restartDelay = 0;
while (!stopping) {
  await waitForRpcs();
  if (stopping) break;
  const local = chains.filter((c) => c.local).map((c) => ({ id: c.id, rpcUrls: rpcUrls(c.id, env) }));
  const forgotten = await forgetReplacedChains(local, env).catch((error: Error) => {
    console.error(
      `Cannot tell whether the local chains' fetched data is theirs (${error.message}); trying again in ${MAX_WAIT_S} s.`,
    );
    return undefined;
  });
  if (forgotten === undefined) {
    await pause(MAX_WAIT_S);
    continue;
  }
  for (const id of forgotten) {
    console.warn(
      `chain ${id}: the blocks and logs fetched earlier are another chain's (it was started afresh); dropped them from ponder_sync.`,
    );
  }
  const started = Date.now();
  const code = await runPonder();
  if (stopping || code !== RETRYABLE_EXIT) process.exit(code);
  restartDelay = Date.now() - started > HEALTHY_RUN_MS ? 1 : Math.min(Math.max(restartDelay * 2, 1), MAX_WAIT_S);
  console.error(
    `The indexer stopped after a failure worth retrying (exit ${code}, see above); restarting it in ${restartDelay} s.`,
  );
  await pause(restartDelay);
}
process.exit(0);
