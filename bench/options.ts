import { type ParseArgsConfig, parseArgs } from "node:util";
import { chooseSeed } from "../devkit/random";

/** What one `npm run bench` measures, and how long each measurement runs. */
export type BenchOptions = {
  smoke: boolean;
  seed: number;
  /** Connections of every load run. */
  connections: number;
  /** Seconds of each load run, after a warm-up of `warmupS`. */
  durationS: number;
  warmupS: number;
  /** Delegations in the small and in the large database (v1 and v2 together). */
  small: number;
  large: number;
  /** Wallets the delegations are spread over. */
  wallets: number;
  /** Blocks mined before the indexer starts, over which the seeded history is spread. */
  blocks: number;
  /**
   * Delegations of each hot wallet, per registry version (part of `large`); listings are measured
   * for the smallest and largest.
   */
  hot: number[];
  /** v2 hot wallets with only incoming delegations, each from a vault of its own (vaults), and how many each. */
  vaultWallets: number;
  vaultIncoming: number;
  /** v2 wallets of ~10 delegations (bulk listings), the wallets of each bulk listing, and distinct listings per run. */
  bulkWallets: number;
  bulkSize: number;
  bulkLists: number;
  /** Share of the delegations that are v1. */
  v1Share: number;
  /** Distinct URLs per check route, and how many of them are verified before each run. */
  urlsPerRoute: number;
  verifySample: number;
  /** Checks in each batch, distinct batches per run, and seconds of each batch run. */
  batchSize: number;
  batches: number;
  batchDurationS: number;
  /** Items of a page of history events, of a page of the large wallet's listing, and when reading the whole history. */
  historyPage: number;
  listingPage: number;
  readPage: number;
  /** Registry events backfilled by a fresh indexer; and by npm start alone on PGlite before its checks. */
  backfillEvents: number;
  startEvents: number;
  /** Samples of the delay from a new delegation's block to the API's answer. */
  delaySamples: number;
  /** Seconds of the hostile section's attack, and of the idle span measured before it. */
  attackS: number;
  /** Only the hostile section (`--hostile`), over the large database. */
  hostileOnly: boolean;
};

const FULL = {
  durationS: 10,
  warmupS: 2,
  small: 10_000,
  large: 1_000_000,
  wallets: 200_000,
  blocks: 12_000,
  hot: [1_000, 1_000, 2_500, 5_000, 10_000],
  vaultWallets: 20,
  vaultIncoming: 1_000,
  bulkWallets: 10_000,
  bulkSize: 1_000,
  bulkLists: 20,
  urlsPerRoute: 20_000,
  verifySample: 200,
  batchSize: 10_000,
  batches: 8,
  batchDurationS: 20,
  listingPage: 1_000,
  backfillEvents: 200_000,
  startEvents: 20_000,
  delaySamples: 7,
  attackS: 60,
};

/** Tiny sizes and short runs: proves the whole bench works (CI), measures nothing worth keeping. */
const SMOKE = {
  durationS: 0.5,
  warmupS: 0.25,
  small: 1_000,
  large: 12_000,
  wallets: 3_000,
  blocks: 150,
  hot: [50, 200],
  vaultWallets: 4,
  vaultIncoming: 100,
  bulkWallets: 200,
  bulkSize: 50,
  bulkLists: 4,
  urlsPerRoute: 500,
  verifySample: 20,
  batchSize: 1_000,
  batches: 2,
  batchDurationS: 1,
  listingPage: 50,
  backfillEvents: 3_000,
  startEvents: 1_000,
  delaySamples: 2,
  attackS: 3,
};

/** The bench's flags, `--smoke` and `--duration <s>`, as node:util parseArgs takes them. */
export const BENCH_FLAGS = { smoke: { type: "boolean" }, duration: { type: "string" } } as const;

/** The command line, as node:util parseArgs reads it by `config`; on a mistake, says it and `usage`, and exits. */
export function commandLineOrExit<T extends ParseArgsConfig>(
  config: T,
  usage: string,
): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (error) {
    console.error(`${(error as Error).message}; ${usage}`);
    return process.exit(1);
  }
}

/** From the command line: `--smoke`, `--duration <s>`, `--hostile` and nothing else (see benchOptions). */
export function parseOptions(env: NodeJS.ProcessEnv = process.env): BenchOptions {
  const { values } = commandLineOrExit(
    { options: { ...BENCH_FLAGS, hostile: { type: "boolean" } } },
    "use --smoke, --duration <seconds> and --hostile",
  );
  return benchOptions(values, env);
}

/**
 * Flags: `--smoke`, `--duration <s>`, `--hostile`; or BENCH_SMOKE=1, BENCH_DURATION=<s>; SEED=<n> as
 * the tests take it.
 */
export function benchOptions(
  flags: { smoke?: boolean; duration?: string; hostile?: boolean },
  env: NodeJS.ProcessEnv = process.env,
): BenchOptions {
  const smoke = flags.smoke === true || env.BENCH_SMOKE === "1";
  const duration = Number(flags.duration ?? (env.BENCH_DURATION || Number.NaN));
  const sizes = smoke ? SMOKE : FULL;
  return {
    ...sizes,
    smoke,
    hostileOnly: flags.hostile === true,
    seed: chooseSeed(env),
    connections: 64,
    historyPage: 100,
    readPage: 1_000,
    durationS: Number.isFinite(duration) && duration > 0 ? duration : sizes.durationS,
    v1Share: 0.25,
  };
}
