import { type ParseArgsConfig, parseArgs } from "node:util";
import { CHAINS } from "../core/chains";
import { chooseSeed } from "../devkit/random";

/** What one `npm run bench` measures, and how long each measurement runs. */
const FULL = {
  /** Seconds of each load run, after a warm-up of `warmupS`. */
  durationS: 10,
  warmupS: 2,
  /**
   * Seconds at least of npm start's run on PGlite (row (d)): its answers wait while it indexes a
   * block on the same thread, and on a busy machine a run shorter than that wait ended with none
   * (in CI, beside another test file: none in 0.5 s, then none in 2 s).
   */
  startMinS: 0,
  /**
   * Seconds at least of each scale run (bench/hostile.ts): as a keyless run begins, its burst may
   * saturate the replica, which then sheds keyless requests for a moment (api/http/load.ts), each
   * refusal paced 250 ms (api/access/pace.ts); a run shorter than that moment ended with no answer
   * to model from (in CI: none in 0.5 s).
   */
  scaleMinS: 0,
  /** Delegations in the small and in the large database (v1 and v2 together), over `wallets` wallets. */
  small: 10_000,
  large: 1_000_000,
  wallets: 200_000,
  /** Blocks mined before the indexer starts, over which the seeded history is spread. */
  blocks: 12_000,
  /** Delegations of each hot wallet, per registry version (part of `large`); listings of the smallest and largest. */
  hot: [1_000, 1_000, 2_500, 5_000, 10_000],
  /** v2 hot wallets with only incoming delegations, each from a vault of its own (vaults), and how many each. */
  vaultWallets: 20,
  vaultIncoming: 1_000,
  /** v2 wallets of ~10 delegations (bulk listings), the wallets of each bulk listing, and distinct listings per run. */
  bulkWallets: 10_000,
  bulkSize: 1_000,
  bulkLists: 20,
  /** v2 checks of the airdrop's snapshot, asked through the typed client's checkMany (bench/airdrop.ts). */
  airdropChecks: 1_000_000,
  /** Distinct URLs per check route, and how many of them are verified before each run. */
  urlsPerRoute: 20_000,
  verifySample: 200,
  /** Checks in each batch, distinct batches per run, and seconds of each batch run. */
  batchSize: 10_000,
  batches: 8,
  batchDurationS: 20,
  /** Items of a page of the large wallet's listing. */
  listingPage: 1_000,
  /** Registry events backfilled by a fresh indexer; and by npm start alone on PGlite before its checks. */
  backfillEvents: 200_000,
  startEvents: 20_000,
  /** Delegations of the wallet /rpc lists (bench/rpc.ts). */
  rpcListing: 1_000,
  /** Entries of the change log replayed to a webhook endpoint from the oldest (bench/backlog.ts). */
  backlogEntries: 1_000_000,
  /** Streams of the change feed held open on one replica process (bench/subscribers.ts). */
  subscribers: 10_000,
  /** Samples of the delay from a new delegation's block to the API's answer. */
  delaySamples: 7,
  /** New delegations timed through a replica reading a standby (bench/standby.ts). */
  standbySamples: 20,
  /** Seconds of the hostile section's attack, and of the idle span measured before it. */
  attackS: 60,
  /** Chains asked across at once (bench/across.ts), and the delegations seeded on each. */
  acrossChains: 8,
  acrossDelegations: 50_000,
  /**
   * The whole table in one deployment (bench/whole-table.ts): chains of the table posed (every one),
   * chains per Ponder process (5: nine processes, which fit the memory target; 1: each alone, which
   * does not, docs/performance.md), seconds every chain may take to answer after npm
   * start, seconds of the idle span, rounds of a new delegation on every chain, and delegations
   * verified per chain.
   */
  wholeTableChains: CHAINS.length,
  wholeTableGroup: 5,
  wholeTableReadyS: 900,
  wholeTableIdleS: 60,
  wholeTableRounds: 10,
  wholeTableVerify: 5,
};

/** Tiny sizes and short runs: proves the whole bench works (CI), measures nothing worth keeping. */
const SMOKE: typeof FULL = {
  durationS: 0.25,
  // No warm-up: with its pause for the server to see its connections close, it took a second of
  // each of about 130 runs; the soak (bench/soak.ts) still runs one.
  warmupS: 0,
  startMinS: 5,
  scaleMinS: 3,
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
  airdropChecks: 20_000,
  urlsPerRoute: 500,
  verifySample: 20,
  batchSize: 1_000,
  batches: 2,
  batchDurationS: 1,
  listingPage: 50,
  backfillEvents: 3_000,
  startEvents: 1_000,
  rpcListing: 150,
  backlogEntries: 5_000,
  subscribers: 50,
  delaySamples: 2,
  standbySamples: 3,
  attackS: 3,
  acrossChains: 3,
  // The bulk wallets (~10 delegations each) are spread over these chains, and hot wallets may hold
  // at most 0.6 of a chain's v2 delegations (bench/dataset.ts): 200 wallets over 3 chains need
  // about 1,500 a chain (three quarters v2); 1,000 failed.
  acrossDelegations: 2_000,
  wholeTableChains: 3,
  wholeTableGroup: 2,
  wholeTableReadyS: 300,
  wholeTableIdleS: 10,
  wholeTableRounds: 2,
  wholeTableVerify: 2,
};

export type BenchOptions = typeof FULL & {
  smoke: boolean;
  seed: number;
  /** Connections of every load run. */
  connections: number;
  /** Items of a page of history events, and when reading the whole history. */
  historyPage: number;
  readPage: number;
  /** Share of the delegations that are v1. */
  v1Share: number;
  /** Seconds of row (d)'s run: durationS, or startMinS if longer. */
  startDurationS: number;
  /** Seconds of each scale run: durationS, or scaleMinS if longer. */
  scaleDurationS: number;
};

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

/** Flags `--smoke`, `--duration <s>` and `extra` (positionals if `positionals`); SEED=<n> as the tests take it. */
export function benchOptions(extra: ParseArgsConfig["options"] = {}, positionals = false) {
  const flags = { smoke: { type: "boolean" }, duration: { type: "string" }, ...extra } as const;
  const usage = `use --smoke, --duration <seconds>${Object.keys(extra)
    .map((flag) => `, --${flag}`)
    .join("")}`;
  const parsed = commandLineOrExit({ options: flags, allowPositionals: positionals }, usage);
  const values = parsed.values as Record<string, string | boolean | undefined>;
  const sizes = values.smoke === true ? SMOKE : FULL;
  const duration = Number(values.duration);
  const durationS = duration > 0 ? duration : sizes.durationS;
  const options: BenchOptions = {
    ...sizes,
    smoke: values.smoke === true,
    seed: chooseSeed(process.env),
    connections: 64,
    historyPage: 100,
    readPage: 1_000,
    durationS,
    startDurationS: Math.max(durationS, sizes.startMinS),
    scaleDurationS: Math.max(durationS, sizes.scaleMinS),
    v1Share: 0.25,
  };
  return { options, values, positionals: parsed.positionals as string[] };
}

/** The sections `npm run bench -- --only <section>` runs alone. */
export const SECTIONS = ["whole-table", "backlog", "subscribers", "standby", "rpc"] as const;
export type Section = (typeof SECTIONS)[number];

/** `npm run bench`'s flags beyond benchOptions': a section alone, and the whole table's size and grouping. */
const RUN_FLAGS = {
  only: { type: "string" },
  "whole-table-chains": { type: "string" },
  "whole-table-group": { type: "string" },
} as const;

/** `npm run bench`'s options: benchOptions' with RUN_FLAGS applied; on a mistake, says it and exits. */
export function runOptions(): { options: BenchOptions; only: Section | undefined } {
  const { options, values } = benchOptions(RUN_FLAGS);
  const count = (flag: keyof typeof RUN_FLAGS, fallback: number) => {
    const value = values[flag];
    if (value === undefined) return fallback;
    if (typeof value !== "string" || !/^[1-9]\d*$/.test(value)) {
      console.error(`--${flag} takes a whole number, 1 or more`);
      process.exit(1);
    }
    return Number(value);
  };
  const only = values.only;
  if (only !== undefined && !SECTIONS.includes(only as Section)) {
    console.error(`--only takes a section of ${SECTIONS.join(", ")}`);
    process.exit(1);
  }
  const whole = {
    wholeTableChains: count("whole-table-chains", options.wholeTableChains),
    wholeTableGroup: count("whole-table-group", options.wholeTableGroup),
  };
  return { options: { ...options, ...whole }, only: only as Section | undefined };
}
