/**
 * A database outage (Postgres): the indexer's Postgres stops for 30 s under a steady stream
 * of requests to the indexer's API and to an API replica, while delegations keep arriving on chain.
 * Every request gets an answer within a bounded time — a right one, or 503 problem+json — never a
 * hang or another error; afterwards both answer again by themselves, the indexer has caught up,
 * and its history holds every event exactly once.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Address, zeroHash } from "viem";
import { afterAll, describe, expect, it } from "vitest";
import { type Anvil, startAnvil } from "../devkit/anvil";
import { ask } from "../devkit/ask";
import { abis, installRegistries } from "../devkit/oracle";
import { type PrivatePostgres, startPrivatePostgres } from "../devkit/postgres";
import { Child, freePort, waitFor } from "../devkit/processes";
import { callView, chainClient } from "../devkit/rpc";
import { sendWrite } from "../devkit/send";
import { createApiKey, type Replica, startReplica } from "../devkit/service";
import { historyMismatches } from "./helpers/history";

const CHAIN_ID = 31337;
const OUTAGE_MS = 30_000;
/** No answer may take longer than this, whatever the database does. */
const ANSWER_WITHIN_MS = 10_000;

type Outcome = { base: string; ms: number; status?: number; type?: string | null; body?: string; error?: string };

describe.runIf(process.env.DATABASE_URL)("the database stops for 30 s", () => {
  const cleanup: (() => Promise<void> | void)[] = [];
  afterAll(async () => {
    for (const undo of cleanup.reverse()) await undo();
  });

  it("answers right or 503 within a bounded time, never hangs, recovers by itself, loses nothing", async () => {
    const pg: PrivatePostgres = await startPrivatePostgres();
    cleanup.push(pg.destroy);
    const anvil: Anvil = await startAnvil({ chainId: CHAIN_ID });
    cleanup.push(anvil.stop);
    const registries = await installRegistries(anvil.url);
    const accounts = await chainClient(anvil.url).getAddresses();
    /** The j-th delegate: a fresh address per delegation. */
    const target = (j: number) => `0x${(0x1000 + j).toString(16).padStart(40, "0")}` as Address;
    const delegate = (j: number) =>
      sendWrite(anvil.url, abis.v2, accounts[1]!, registries.v2, "delegateAll", [target(j), zeroHash, true]);

    // The indexer as operators run it: `npm start`, which restarts Ponder after a retryable exit.
    const dir = mkdtempSync(join(tmpdir(), "db-outage-"));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const port = await freePort();
    const schema = `outage_${Date.now().toString(36)}`;
    const accessSchema = `access_${schema}`;
    const adminToken = randomBytes(24).toString("hex");
    const cleared = Object.fromEntries(
      Object.keys(process.env)
        .filter((n) => n.startsWith("PONDER_RPC_URL_"))
        .map((n) => [n, ""]),
    );
    const indexer = new Child("npm", ["start", "--silent", "--", "--schema", schema], {
      ...cleared,
      DATABASE_URL: pg.url,
      PONDER_RPC_URL_31337: anvil.url,
      PORT: String(port),
      START_BLOCKS_FILE: join(dir, "start-blocks.json"),
      ACCESS_SCHEMA: accessSchema,
      ADMIN_TOKEN: adminToken,
    });
    cleanup.push(() => indexer.stop());
    const indexerUrl = `http://127.0.0.1:${port}`;
    await waitFor(
      "the indexer to be ready",
      async () => ((await fetch(`${indexerUrl}/ready`)).status === 200 ? true : undefined),
      120_000,
    );
    const headers = { "X-API-KEY": await createApiKey(indexerUrl, adminToken) };
    const replica: Replica = await startReplica({ schema, accessSchema }, { DATABASE_URL: pg.url, API_WORKERS: "1" });
    cleanup.push(replica.stop);

    /** (1 → j) as asked of `base`, and the contract's answer at the block it reports. */
    const check = async (base: string, j: number): Promise<Outcome & { expected?: string; block?: bigint }> => {
      const started = Date.now();
      try {
        const a = await ask(base, `/registry/v2/check/all?chainId=${CHAIN_ID}&from=${accounts[1]}&to=${target(j)}`, {
          headers,
          timeoutMs: ANSWER_WITHIN_MS * 3,
          reask: false,
        });
        const expected =
          a.status === 200 && a.block !== undefined
            ? String(
                await callView(
                  anvil.url,
                  abis.v2,
                  registries.v2,
                  "checkDelegateForAll",
                  [target(j), accounts[1]!, zeroHash],
                  a.block,
                ),
              )
            : undefined;
        return {
          base,
          ms: Date.now() - started,
          status: a.status,
          type: a.headers.get("content-type"),
          body: a.text,
          expected,
          block: a.block,
        };
      } catch (error) {
        return { base, ms: Date.now() - started, error: (error as Error).name };
      }
    };
    const bases = [indexerUrl, replica.url];
    const processes = {
      [indexerUrl]: ["npm start", indexer],
      [replica.url]: ["npm run serve", replica.child],
    } as const;
    const caughtUp = (j: number, block: bigint) =>
      Promise.all(
        bases.map((base) =>
          waitFor(
            `${base} to answer 1 → ${j} from block ${block}`,
            async () => {
              const a = await check(base, j);
              return a.status === 200 && a.block! >= block && a.body === "true" ? true : undefined;
            },
            180_000,
          ).catch((error: Error) => {
            // What the process printed says why it did not recover.
            const [name, child] = processes[base]!;
            throw new Error(`${error.message}\n--- ${name} output ---\n${child.output.slice(-8000)}`);
          }),
        ),
      );
    await caughtUp(2, await delegate(2));

    // Requests on both processes all along; the database stops, delegations keep coming.
    const outcomes: (Outcome & { expected?: string })[] = [];
    let loading = true;
    let j = 3;
    const loops = bases.flatMap((base) =>
      [0, 1].map(async () => {
        while (loading) {
          outcomes.push(await check(base, 2 + (outcomes.length % Math.max(1, j - 2))));
          await new Promise((ok) => setTimeout(ok, 100));
        }
      }),
    );
    pg.stop();
    const outageEnds = Date.now() + OUTAGE_MS;
    let last = 0n;
    while (Date.now() < outageEnds) last = await delegate(j++);
    await pg.start();
    await caughtUp(j - 1, last);
    loading = false;
    await Promise.all(loops);

    expect(indexer.running, "npm start is still running").toBe(true);
    const slow = outcomes.filter((o) => o.error !== undefined || o.ms > ANSWER_WITHIN_MS);
    expect(
      slow.map((o) => `${o.base}: ${o.error ?? `${o.ms} ms`}`),
      "answers that hung or took too long",
    ).toEqual([]);
    const wrong = outcomes.filter(
      (o) =>
        !(o.status === 200 && o.body === o.expected) && !(o.status === 503 && o.type === "application/problem+json"),
    );
    expect(
      wrong.map((o) => `${o.base}: ${o.status} ${o.type} ${o.body?.slice(0, 200)} (expected ${o.expected})`),
      "answers neither right nor 503",
    ).toEqual([]);
    for (const base of bases) {
      const mine = outcomes.filter((o) => o.base === base);
      expect(
        mine.filter((o) => o.status === 503).length,
        `${base}: said 503 while the database was down`,
      ).toBeGreaterThan(0);
    }
    const history = await historyMismatches({ schema, pgliteDir: "" }, anvil.url, registries, pg.url);
    expect(history.events.v2).toBe(j - 2);
    expect(history.mismatches).toEqual([]);
  });
});
