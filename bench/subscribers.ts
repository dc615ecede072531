/**
 * The change feed's subscribers on one replica process: a fresh chain of registry events, the
 * indexer, and `npm run serve` with one worker; v2 check all at 64 connections (after a hello run of
 * its own) with no stream open, then again while `o.subscribers` streams of GET /registry/feed with
 * mixed filters are held open by a process of their own (bench/subscribe-worker.ts) and a
 * delegation a second is logged for them (from after the run's hello, which says how fast the
 * machine is, not what the fan-out costs it), then once more with the streams closed: the unloaded
 * runs before and after, so that the machine's drift over the section is not taken for the
 * streams' cost. The figures: the checks' throughput loaded over unloaded (each as its share of its
 * hello run), the replica's resident memory per subscriber, and the subscribers' process's CPU.
 */
import { encodeFunctionData, toHex, zeroHash } from "viem";
import { registryV2Abi } from "../core/abi/registryV2";
import { Child, waitFor } from "../devkit/processes";
import { rpc } from "../devkit/rpc";
import { type BackfillChain, checkAllQueries } from "./backfill";
import type { Cleanup } from "./cleanup";
import { afterHello, type HelloFigure, type RouteMeasurer } from "./measure";
import type { BenchOptions } from "./options";
import { ownTicks, ticksPerSecond, treeMemory } from "./procs";
import { chainCheckAllRoute } from "./routes";
import { CHAIN_ID, startIndexer, startServe } from "./stack";

export type SubscriberFigures = {
  subscribers: number;
  /** The checks with no stream open, before the streams and after them. */
  unloaded: [HelloFigure, HelloFigure];
  loaded: HelloFigure;
  /** The replica's resident memory before the streams opened, and with them open. */
  rssMb: { before: number; open: number };
  /** The subscribers' process: % of one core while the loaded run ran. */
  generatorCpu: number;
};

const TAG = "subscribers";

export async function measureSubscribers(
  o: BenchOptions,
  cleanup: Cleanup,
  chain: BackfillChain,
  measure: RouteMeasurer,
  helloUrl: string,
  log: (line: string) => void,
): Promise<SubscriberFigures> {
  const measureAfterHello = afterHello(measure, helloUrl);
  const { queries, answers } = await checkAllQueries(chain, 2_000, o.seed + 13);
  const route = chainCheckAllRoute("v2 check all, npm run serve (1 worker)", CHAIN_ID, queries, answers);
  const indexer = await startIndexer(cleanup, chain);
  const env = { API_WORKERS: "1", FEED_STREAMS_PER_KEY: String(o.subscribers) };
  const replica = await startServe(cleanup, indexer, TAG, env);
  const unloaded = await measureAfterHello(replica.url, route, indexer.headers, `${route.label}, no stream open`);
  const before = treeMemory(TAG).rssMb;

  const wallets = [...new Set(chain.delegateAlls.flatMap((d) => [d.from, d.to]))].slice(0, 200);
  const args = [replica.url, String(o.subscribers), indexer.apiKey!, String(o.seed + 14), String(CHAIN_ID)];
  // node itself, not npx: its pid is the process whose CPU is counted.
  const subscribers = new Child("node", ["--import", "tsx", "bench/subscribe-worker.ts", ...args, ...wallets]);
  cleanup.add("the subscribers", () => subscribers.stop());
  await waitFor(
    `${o.subscribers} streams open`,
    async () => {
      if (/refused \d+/.test(subscribers.output))
        throw new Error(`a stream was refused: ${subscribers.output.slice(-500)}`);
      return subscribers.output.includes(`open ${o.subscribers}`) || undefined;
    },
    300_000,
  );
  const open = treeMemory(TAG).rssMb;
  log(`subscribers: ${o.subscribers} streams open; npm run serve ${Math.round(before)} → ${Math.round(open)} MB`);

  // A delegation a second, logged and fanned out to the streams it passes, while the checks run:
  // after their hello run, which is to say how fast the machine is now, not what the fan-out costs.
  const [from] = (await rpc(chain.anvil.url, "eth_accounts", [])) as string[];
  let writing = true;
  let writes: Promise<void> = Promise.resolve();
  const pid = subscribers.process.pid!;
  let ticks = 0;
  let started = 0;
  const whileWriting: RouteMeasurer = (...args) => {
    writes = (async () => {
      for (let i = 0; writing; i++) {
        const to = `0x${(0xfeed_0000 + i).toString(16).padStart(40, "0")}` as const;
        const data = encodeFunctionData({
          abi: registryV2Abi,
          functionName: "delegateAll",
          args: [to, zeroHash, true],
        });
        const send = { from, to: chain.registries.v2, data, gas: toHex(300_000) };
        await rpc(chain.anvil.url, "eth_sendTransaction", [send]);
        await new Promise((ok) => setTimeout(ok, 1_000));
      }
    })();
    [ticks, started] = [ownTicks(pid) ?? 0, Date.now()];
    return measure(...args);
  };
  const label = `${route.label}, ${o.subscribers} streams open`;
  const loaded = await afterHello(measure, helloUrl, whileWriting)(replica.url, route, indexer.headers, label);
  const generatorCpu = (100 * ((ownTicks(pid) ?? 0) - ticks)) / ticksPerSecond() / ((Date.now() - started) / 1000);
  writing = false;
  await writes;
  log(`subscribers: ${subscribers.output.trim().split("\n").at(-1)}`);
  await subscribers.stop();
  const after = await measureAfterHello(replica.url, route, indexer.headers, `${route.label}, streams closed`);
  return { subscribers: o.subscribers, unloaded: [unloaded, after], loaded, rssMb: { before, open }, generatorCpu };
}
