/**
 * `npm run bench -- --smoke` works: it exits 0 and prints every figure — each route, each baseline,
 * the indexer's backfill speed and memory beside a minimal Ponder indexer's with Ponder's own
 * account of where each one's backfill went, npm start alone on PGlite (its backfill and checks),
 * the delay (on a replica reading a hot standby too: bench/standby.ts), the API's memory — after
 * verifying sampled answers, and every number it prints is finite and positive: each check route
 * at past blocks (alone and loaded), batches at the head and at a past block, listings at a past
 * block, history pages at random depths, the largest wallets in pages (each page's latency), the
 * whole history read by following Link; the vaults of hot wallets
 * and bulk listings, at the head and at a past block; the hostile section (one keyless client's cost
 * to the service, keyed checks beside a keyless flood); the scale-out model (keyed and keyless
 * checks, the CPU per answer of a replica host and of the primary, two hosts beside one); anvil's
 * eth_call of every check route's checks (at the large size driven by wrk too, both the route and
 * anvil), a small wallet's listing, v2 check all at past moments, v2 batches at 8 connections, an
 * airdrop's snapshot of checks through the typed client's checkMany (its answers sampled and verified),
 * a check and a small wallet's listing across three chains, each figure beside the req/s of a hello
 * run of its own; and every target of bench/report.ts's TARGETS beside its figure. Timings
 * are never asserted: this is a smoke test of the bench, not a benchmark. Postgres only, as the bench.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { TARGETS } from "../bench/report";
import { runNpm } from "../devkit/processes";

type Run = { code: number; output: string };

/** Each check route, and the registry view anvil's eth_call asks for the same checks. */
const CHECK_VIEWS = {
  "v2 check all": "v2 checkDelegateForAll",
  "v2 check contract": "v2 checkDelegateForContract",
  "v2 check erc721": "v2 checkDelegateForERC721",
  "v2 check erc20": "v2 checkDelegateForERC20",
  "v2 check erc1155": "v2 checkDelegateForERC1155",
  "v1 check all": "v1 checkDelegateForAll",
  "v1 check contract": "v1 checkDelegateForContract",
  "v1 check token": "v1 checkDelegateForToken",
};
const CHECK_ROUTES = Object.keys(CHECK_VIEWS);
const BASELINES = [
  "(a) raw node:http hello",
  "(c) npm start's API on Postgres (no replicas), v2 check all",
  "(d) npm start alone on PGlite (no replicas), v2 check all",
];
/**
 * A table row: the label, then req/s, ×hello, hello's req/s, p50, p99, and the CPU of the load
 * generator, the machine and other work ("<1" when under 1%).
 */
const NUMBER = String.raw`\d[\d,]*(?:\.\d+)?`;
/** Answers by status, then the errors (bench/report.ts, statusText). */
const STATUS = String.raw`\d{3}: (?:${NUMBER}|none)`;
const ANSWERS = `${STATUS}(?:, ${STATUS})*; (?:no errors|${NUMBER} errors)`;
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** A row whose label matches `pattern` (a regular expression's source). */
const rowOf = (pattern: string) =>
  new RegExp(`^${pattern}\\s+${[...Array(5).fill(NUMBER), ...Array(3).fill(`<?${NUMBER}`)].join("\\s+")}$`, "m");
const row = (label: string) => rowOf(escapeRegExp(label));
/** A target's line, met or missed: its name, its bound, and the figure it read. */
const targetOf = (name: string) =>
  new RegExp(`^ {2}(?:met {3}|MISSED) {2}${escapeRegExp(name)} [≥≤] ${NUMBER}.*: \\S`, "m");

/**
 * A bound on a hang, not on speed: beside CI's other two files on two cores the smoke ran from
 * about 790 s to past 900 s (alone, 480 s), its deployments' starts most of it (the steps' seconds
 * it prints). Past it runNpm interrupts the bench, which stops what it started, within the hook's
 * own bound.
 */
const BOUND_MS = 1_740_000;

describe.runIf(process.env.DATABASE_URL)("npm run bench -- --smoke", () => {
  let run: Run;
  let results: string;

  beforeAll(async () => {
    run = await runNpm(["run", "bench", "--", "--smoke"], BOUND_MS);
    results = run.output.slice(run.output.indexOf("== results"));
    // The smoke's figures in CI's log: a target's figure can be read without a full run; and its
    // steps with the seconds each began at (bench/script.ts), which say where its minutes go.
    const steps = run.output.split("\n").filter((line) => line.startsWith("· ["));
    console.log(steps.join("\n"));
    console.log(results);
    // A failed run said once, as the suite's error, with the bench's own account of it (the error
    // bench/script.ts prints last) and the step it was in: not a dozen tests' missing rows, which
    // pushed it out of the end of CI's log.
    if (run.code !== 0) {
      const failed = run.output.lastIndexOf(" failed: ");
      throw new Error(
        `npm run bench -- --smoke exited ${run.code} after the step\n${steps.at(-1) ?? "(none)"}\n` +
          (failed < 0 ? run.output : run.output.slice(run.output.lastIndexOf("\n", failed) + 1)).slice(-4000),
      );
    }
  }, BOUND_MS + 90_000);

  it("prints its results (beforeAll fails the suite on any other exit than 0)", () => {
    expect(run.output).toContain("== results");
  });

  it("has no run that failed under load (answers other than 2xx, errors, timeouts)", () => {
    // Each such run is flagged on a line of its own (bench/report.ts): said here, not as a row missing.
    expect(results.match(/^\[failed\] .*$/gm) ?? []).toEqual([]);
  });

  it("prints a row for each baseline, each listing, each check route and its eth_call at both sizes", () => {
    for (const label of BASELINES) expect(results).toMatch(row(label));
    for (const [route, view] of Object.entries(CHECK_VIEWS)) {
      for (const size of ["small", "large"]) {
        expect(results).toMatch(row(`${route} (${size})`));
        expect(results).toMatch(row(`(b) anvil eth_call ${view} (${size})`));
      }
    }
    const shares = CHECK_ROUTES.map((route) => `${escapeRegExp(route)} ${NUMBER} / ${NUMBER}`).join(", ");
    expect(results).toMatch(
      new RegExp(`^checks, each run's req/s as a share of a hello run just before it, small / large: ${shares}$`, "m"),
    );
    expect(results).toMatch(
      new RegExp(
        "^anvil's eth_call of the same checks, each run's req/s as a share of the hello run before the check's, " +
          `small / large: ${shares}$`,
        "m",
      ),
    );
    const tails = CHECK_ROUTES.map(
      (route) => `${escapeRegExp(route)} ${NUMBER} \\(hello ${NUMBER}\\) / ${NUMBER} \\(hello ${NUMBER}\\)`,
    ).join(", ");
    expect(results).toMatch(new RegExp(`^checks' p99 beside their hello run's, in ms, small / large: ${tails}$`, "m"));
    // The large size's checks and anvil's eth_call of them, driven by wrk too.
    for (const [route, view] of Object.entries(CHECK_VIEWS)) {
      expect(results).toMatch(row(`${route} (large, wrk)`));
      expect(results).toMatch(row(`(b) anvil eth_call ${view} (large, wrk)`));
    }
    expect(results).toMatch(
      new RegExp(
        "^driven by wrk \\(large\\), each check's req/s as a share of its wrk hello run's, and anvil's eth_call's " +
          `of the same checks: ${shares}$`,
        "m",
      ),
    );
    const smallListing = `v2 listing of a small wallet, one of ${NUMBER} of ${NUMBER}–${NUMBER} delegations`;
    expect(results).toMatch(rowOf(smallListing));
    for (const version of ["v2", "v1"]) {
      const listings =
        results.match(new RegExp(`^${version} listing, [\\d,]+-delegation wallet(, 1 connection)?\\s`, "gm")) ?? [];
      expect(listings, `${version} listings`).toHaveLength(4);
    }
  });

  it("prints each check route at past blocks, batches, past-block listings, history pages and wallet pages", () => {
    for (const route of CHECK_ROUTES) {
      expect(results).toMatch(row(`${route} at a past block, 1 connection`));
      expect(results).toMatch(row(`${route} at a past block`));
    }
    expect(results).toMatch(rowOf(`v2 batch of ${NUMBER} checks, 8 connections`));
    expect(results).toMatch(
      new RegExp(
        `^airdrop: ${NUMBER} v2 checks at block ${NUMBER} through the typed client's checkMany, one client: ` +
          `${NUMBER} s, ${NUMBER} checks/s, the client's CPU ${NUMBER} s \\(${NUMBER} answers verified\\)$`,
        "m",
      ),
    );
    for (const version of ["v2", "v1"]) {
      for (const at of ["", " at a past block"])
        expect(results).toMatch(rowOf(`${version} batch of ${NUMBER} checks${at}, 1 connection`));
      expect(results).toMatch(rowOf(`${version} listing at a past block, ${NUMBER}-delegation wallet, 1 connection`));
      expect(results).toMatch(row(`${version} history, page of 100 at a random depth, 1 connection`));
      expect(results).toMatch(
        rowOf(`${version} ${NUMBER}-event wallet history, page of 100 at a random depth, 1 connection`),
      );
      expect(results).toMatch(rowOf(`${version} ${NUMBER}-delegation wallet in pages of ${NUMBER}, 1 connection`));
      expect(results).toMatch(rowOf(`${version} ${NUMBER}-delegation wallet in pages of ${NUMBER}`));
      expect(results).toMatch(
        new RegExp(
          `^history: ${version} whole history, following Link at limit=1000: ${NUMBER} events in ${NUMBER} pages, ` +
            `${NUMBER} events/s`,
          "m",
        ),
      );
      expect(results).toMatch(
        new RegExp(`^pages: ${version} ${NUMBER}-delegation wallet .*: p50 by page 1: ${NUMBER}, 2: ${NUMBER}`, "m"),
      );
    }
  });

  it("prints every target of the table, met or missed, beside its figure, and a missed one by how much", () => {
    for (const { name } of TARGETS) expect(results).toMatch(targetOf(name));
    expect(results.match(/^ {2}(met {3}|MISSED) {2}\S/gm)).toHaveLength(TARGETS.length);
    for (const line of results.match(/^ {2}MISSED {2}.*$/gm) ?? [])
      expect(line).toMatch(new RegExp(`(missed: ${NUMBER}(× the limit|% of the target)|failed under load)$`));
  });

  it("prints v2 check all at past moments, and a check and a small listing across every chain", () => {
    expect(results).toMatch(row("v2 check all at a past moment"));
    expect(results).toMatch(row("v2 check all across 3 chains"));
    expect(results).toMatch(rowOf(`v2 listing across 3 chains of a small wallet, one of ${NUMBER}`));
  });

  it("prints /rpc's runs beside anvil's eth_call of the same calls, and a REST batch beside aggregate3", () => {
    for (const label of [
      "v2 check contract through /rpc",
      "(b) anvil eth_call of the same checks",
      "v2 check contract through /rpc at a past block",
      "(b) anvil eth_call of the same listing",
      "(b) anvil eth_call of the same listing (wrk)",
      "Multicall3 aggregate3 of 100 v2 checks through /rpc, 1 connection",
      "v2 batch of the same 100 checks, 1 connection",
    ])
      expect(results).toMatch(row(label));
    for (const by of ["", " \\(wrk\\)"])
      expect(results).toMatch(rowOf(`v2 getIncomingDelegations through /rpc, ${NUMBER}-delegation wallet${by}`));
  });

  it("prints the vaults of hot wallets and bulk listings, at the head and at a past block", () => {
    for (const at of ["", " at a past block"]) {
      for (const kind of ["all", "erc20"])
        expect(results).toMatch(
          rowOf(`v2 vaults type=${kind}${at}, ${NUMBER}-incoming-delegation wallet, 1 connection`),
        );
      expect(results).toMatch(rowOf(`v2 bulk listing of ${NUMBER} wallets of ~10 delegations${at}, 1 connection`));
    }
  });

  it("prints the hostile section: one keyless client's cost, keyed checks beside a keyless flood", () => {
    const share = `<?${NUMBER}%`;
    expect(results).toMatch(
      new RegExp(
        `^hostile, one keyless client: from one address, ${NUMBER} connections for ${NUMBER} s \\(its load ` +
          `generator ${share} of one core\\), .*4 MiB batch bodies.*: answered ${ANSWERS}$`,
        "m",
      ),
    );
    expect(results).toMatch(
      new RegExp(
        `^hostile, one keyless client: the service's CPU on it beyond the same span idle: ${share} of one core ` +
          `\\(its processes ${share}, their ${NUMBER} Postgres backends ${share}\\); idle, it spent ${share} of ` +
          "one core$",
        "m",
      ),
    );
    const flood = "64 connections of keyless checks from 1,000 forwarded addresses";
    for (const label of ["unloaded", "beside the keyless flood"])
      expect(results).toMatch(row(`hostile: v2 check all, keyed, ${label}`));
    expect(results).toMatch(
      new RegExp(
        `^hostile, keyed under a keyless flood: v2 check all beside ${flood} \\(TRUSTED_PROXY\\): ${NUMBER} ` +
          `req/s, ${NUMBER}% of unloaded \\(${NUMBER} req/s\\); p99 ${NUMBER} ms, ${NUMBER}× unloaded ` +
          `\\(${NUMBER} ms\\); load generators: keyed ${share} \\(unloaded ${share}\\), keyless ${share} of one core$`,
        "m",
      ),
    );
    const keyless = results.match(
      new RegExp(`^hostile, keyed under a keyless flood: the flood's answers: ${ANSWERS}$`, "m"),
    );
    expect(keyless?.[0]).toMatch(/ 200: .* 429: .* 503: /);
  });

  it("prints the scale-out model: keyed and keyless checks, each host's and the primary's CPU per answer", () => {
    expect(results).toMatch(row("scale: every check route, keyed"));
    for (const what of ["keyed", "keyless"]) {
      expect(results).toMatch(
        new RegExp(
          `^scale-out, modelled \\(not measured on two hosts\\): ${what} checks from every check route at 64 ` +
            `connections \\(load generator <?${NUMBER}% of one core\\), per 200 answer beyond idle: a replica host ` +
            `${NUMBER} µs of CPU .*, the primary (?:${NUMBER} µs|nothing beyond idle) \\(its access connections\\) ` +
            `and <?${NUMBER}% of a core idle per replica; hosts and primary of ${NUMBER} cores: one host ${NUMBER} ` +
            `answers/s, two ${NUMBER}: ${NUMBER}×; answered ${ANSWERS}$`,
          "m",
        ),
      );
    }
  });

  it("prints the indexing figures, the delay and the API's memory", () => {
    const afterEvents = `of which ${NUMBER} ms after its last event: Ponder creating the tables' indexes`;
    expect(results).toMatch(
      new RegExp(
        `^indexing: backfill of ${NUMBER} v2 events .*: ${NUMBER} events/s .*${afterEvents}.*, peak RSS ${NUMBER} MB`,
        "m",
      ),
    );
    expect(results).toMatch(
      new RegExp(
        `^indexing, the minimal Ponder indexer \\(bench/baseline: .*\\) over the same blocks: ${NUMBER} events/s ` +
          `.*${afterEvents}.*peak RSS ${NUMBER} MB$`,
        "m",
      ),
    );
    expect(results).toMatch(
      new RegExp(`^indexing, the events alone \\(.*\\): ${NUMBER}× the minimal indexer's events/s$`, "m"),
    );
    const split = `waiting for its sync ${NUMBER} ms, indexing functions ${NUMBER} ms, flushing rows ${NUMBER} ms`;
    expect(results).toMatch(
      new RegExp(
        `^indexing, each backfill by Ponder's own account \\(its /metrics\\): the indexer ${split}; the minimal ` +
          `indexer ${split}; functions and flushes ${NUMBER}× the minimal indexer's$`,
        "m",
      ),
    );
    expect(results).toMatch(
      new RegExp(
        `^indexing, npm start alone on PGlite \\(the README's first command\\) over ${NUMBER} events of the same ` +
          `kind: ${NUMBER} events/s .*peak RSS ${NUMBER} MB$`,
        "m",
      ),
    );
    expect(results).toMatch(new RegExp(`^delay: .* ${NUMBER} ms \\(median\\), ${NUMBER} ms \\(max\\)`, "m"));
    const delays = `${NUMBER} ms \\(median\\), ${NUMBER} ms \\(p95\\)`;
    expect(results).toMatch(
      new RegExp(
        `^standby: a new delegation with npm run serve reading a hot standby .*, ${NUMBER} samples, block time 1 s, ` +
          `after its block was seen mined: answered there ${delays}; its change-feed event \\(GET /registry/feed\\) ` +
          `on npm start ${delays}, on npm run serve ${delays}; its webhook delivery's first attempt \\(npm start's ` +
          `deliverer\\) ${delays}$`,
        "m",
      ),
    );
    expect(results).toMatch(
      new RegExp(
        `^memory: npm run serve RSS after the load runs \\(\\d+ processes\\): ${NUMBER} MB with the .*, ` +
          `${NUMBER} MB \\(peak ${NUMBER} MB\\) with the .*; per delegation ${NUMBER} and ${NUMBER} bytes$`,
        "m",
      ),
    );
  });

  it("verified sampled answers before the load runs", () => {
    expect(results).toMatch(
      new RegExp(`^verified: ${NUMBER} sampled answers before the runs, all as the seeded data implies`, "m"),
    );
  });

  it("prints only finite, positive numbers", () => {
    expect(results).not.toMatch(/NaN|Infinity|-\d/);
    // Versions (autocannon 8.0.0) are not figures.
    const numbers = (results.match(/\d[\d,]*(?:\.\d+)*/g) ?? []).filter((n) => !/\.\d+\./.test(n));
    expect(numbers.length).toBeGreaterThan(100);
    for (const n of numbers) expect(Number(n.replace(/,/g, "")), n).toBeGreaterThan(0);
  });
});
