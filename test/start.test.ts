/**
 * `npm start` when an RPC cannot be reached: the service stays up, says in its log which
 * RPC failed and how to fix it, retries with growing pauses, answers chain_syncing meanwhile (not
 * a crash), and starts indexing by itself once the RPC answers; the same when the RPC answers but
 * fails the search for the registries' start blocks. With no RPC configured at all it
 * goes to Ethereum mainnet's public RPC and says that this is slow and rate-limited.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { type Address, encodeFunctionData, type Hex, toHex, zeroHash } from "viem";
import { mainnet } from "viem/chains";
import { afterEach, describe, expect, it } from "vitest";
import { type Anvil, startAnvil } from "../devkit/anvil";
import { ask } from "../devkit/ask";
import { abis, installRegistries } from "../devkit/oracle";
import { Child, freePort, GiveUp, ROOT, waitFor } from "../devkit/processes";
import { callView, chainClient, rpc } from "../devkit/rpc";
import { ponderFinalityDepth } from "../ponder/ponder-0.16.10";
import { startRpcProxy } from "./helpers/rpc-proxy";

/** A check's parties: two addresses no one uses. */
const PARTIES = "to=0x0000000000000000000000000000000000000002&from=0x0000000000000000000000000000000000000003";
const CHECK = `/registry/v2/check/all?chainId=31337&${PARTIES}`;

const started: { stop(): Promise<void> }[] = [];
afterEach(async () => {
  // In reverse: processes first, then the directories they wrote.
  for (const s of started.splice(0).reverse()) await s.stop();
});

/**
 * `npm start`'s command with only the given RPC variables, a fresh schema and a free port; its
 * PGlite database in `dir` (a fresh directory unless given; on Postgres, the test file's database).
 */
async function launch(
  rpc: Record<string, string>,
  dir = newDir(),
): Promise<{ child: Child; port: number; output: () => string }> {
  const port = await freePort();
  const cleared = Object.fromEntries(
    Object.keys(process.env)
      .filter((n) => n.startsWith("PONDER_RPC_URL_"))
      .map((n) => [n, ""]),
  );
  const schema = `start_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const child = new Child(join(ROOT, "node_modules/.bin/tsx"), ["scripts/start.ts", "--schema", schema], {
    ...cleared,
    ...rpc,
    PORT: String(port),
    PGLITE_DIR: join(dir, "pglite"),
    START_BLOCKS_FILE: join(dir, "start-blocks.json"),
    ACCESS_SCHEMA: `access_${schema}`,
    ADMIN_TOKEN: "",
  });
  started.push(child);
  return { child, port, output: () => stripVTControlCharacters(child.output) };
}

function newDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "start-test-"));
  started.push({ stop: async () => rmSync(dir, { recursive: true, force: true }) });
  return dir;
}

/** The first answer to `path` (through the shared client, which holds it to /openapi.json), as a problem. */
const problemOf = async (base: string, path: string) => {
  const res = await ask(base, path, { reask: false });
  return {
    status: res.status,
    type: res.headers.get("content-type"),
    retryAfter: res.headers.get("retry-after"),
    body: JSON.parse(res.text) as { code?: string; status?: number },
  };
};

describe("npm start with an RPC it cannot reach", () => {
  it("stays up, names the RPC and the fix, retries with backoff, answers chain_syncing; indexes once the RPC \
answers", async () => {
    const rpcPort = await freePort();
    const rpcUrl = `http://127.0.0.1:${rpcPort}`;
    const { child, port, output } = await launch({ PONDER_RPC_URL_31337: rpcUrl });
    const url = `http://127.0.0.1:${port}`;

    // Three rounds of the message, with the pause growing.
    const said = await waitFor(
      "the unreachable-RPC message three times",
      async () => {
        if (!child.running) throw new GiveUp(`the service exited:\n${output()}`);
        const lines = output()
          .split("\n")
          .filter((l) => l.includes("cannot reach its RPC"));
        return lines.length >= 3 ? lines : undefined;
      },
      60_000,
    );
    for (const line of said) {
      expect(line).toContain("chain 31337");
      expect(line).toContain(rpcUrl);
      expect(line).toContain("ECONNREFUSED");
      expect(line).toContain("PONDER_RPC_URL_31337=");
      expect(line).toContain("npm run demo");
    }
    expect(said.slice(0, 3).map((l) => /Trying again in (\d+) s/.exec(l)?.[1])).toEqual(["1", "2", "4"]);

    // Meanwhile the API is up and honest: syncing, not down, not a guess.
    const check = await problemOf(url, CHECK);
    expect(check).toMatchObject({
      status: 503,
      type: "application/problem+json",
      retryAfter: "5",
      body: { code: "chain_syncing", status: 503 },
    });
    const v1 = await problemOf(url, "/registry/v1/0x0000000000000000000000000000000000000002?chainId=31337");
    expect(v1).toMatchObject({ status: 503, body: { code: "chain_syncing" } });
    // A chain it is not configured for is still unsupported_chain, not syncing.
    expect((await problemOf(url, `/registry/v2/check/all?chainId=10&${PARTIES}`)).body.code).toBe("unsupported_chain");
    expect((await fetch(`${url}/health`)).status).toBe(200);
    expect((await fetch(`${url}/ready`)).status).toBe(503);
    const chains = JSON.parse((await ask(url, "/registry/chains", { reask: false })).text) as {
      chainId: number;
      status: string;
      indexedBlock: unknown;
    }[];
    expect(chains).toEqual([expect.objectContaining({ chainId: 31337, status: "syncing", indexedBlock: null })]);
    expect(child.running).toBe(true);
    expect(output()).not.toMatch(/Build failed|uncaught|unhandled/i);

    // The RPC comes up: the service starts indexing by itself, on the same port. The chain has both
    // registries by then: one installed while the launcher looks would leave the other out of its plan.
    const anvil: Anvil = await startAnvil();
    started.push(anvil);
    await installRegistries(anvil.url);
    const proxy = await startRpcProxy(anvil.url, undefined, rpcPort);
    started.push({ stop: proxy.close });
    await waitFor(
      "the service to be ready after the RPC came up",
      async () => {
        if (!child.running) throw new GiveUp(`the service exited:\n${output()}`);
        return (await fetch(`${url}/ready`)).status === 200 ? true : undefined;
      },
      120_000,
    );
    const answered = await ask(url, CHECK, { reask: false });
    expect(answered.status).toBe(200);
    expect(answered.text).toBe("false");
    expect(answered.headers.get("x-indexed-block")).toMatch(/^\d+$/);
  });

  it("an RPC that answers but fails the start-block search (rate-limited, pruned): retried with backoff, not an \
exit", async () => {
    const anvil: Anvil = await startAnvil();
    started.push(anvil);
    await installRegistries(anvil.url);
    let failing = true;
    const proxy = await startRpcProxy(anvil.url, (calls) =>
      failing && calls.some((c) => c.method === "eth_getCode")
        ? { status: 429, body: '{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"rate limited"}}' }
        : undefined,
    );
    started.push({ stop: proxy.close });
    const { child, port, output } = await launch({ PONDER_RPC_URL_31337: proxy.url });
    const said = await waitFor(
      "the start-block message twice",
      async () => {
        if (!child.running) throw new GiveUp(`the service exited:\n${output()}`);
        const lines = output()
          .split("\n")
          .filter((l) => l.includes("could not find where registry"));
        return lines.length >= 2 ? lines : undefined;
      },
      60_000,
    );
    for (const line of said) expect(line).toMatch(/archive node.*Trying again in \d+ s/);
    expect((await problemOf(`http://127.0.0.1:${port}`, CHECK)).body.code).toBe("chain_syncing");

    failing = false;
    await waitFor(
      "the service to be ready once the search succeeds",
      async () => {
        if (!child.running) throw new GiveUp(`the service exited:\n${output()}`);
        return (await fetch(`http://127.0.0.1:${port}/ready`)).status === 200 ? true : undefined;
      },
      120_000,
    );
    expect(output()).toMatch(/registry v2 was deployed in block \d+/);
  });

  it("with no RPC configured: Ethereum mainnet through viem's public RPC, and the log says it is slow and \
rate-limited", async () => {
    const { child, output } = await launch({});
    const warning = await waitFor(
      "the public-RPC warning",
      async () => {
        if (!child.running) throw new GiveUp(`the service exited:\n${output()}`);
        return output()
          .split("\n")
          .find((l) => l.includes("No PONDER_RPC_URL_<chainId> is set"));
      },
      60_000,
    );
    expect(warning).toContain(mainnet.rpcUrls.default.http[0]);
    expect(warning).toContain("slow and rate-limited");
    expect(warning).toContain("PONDER_RPC_URL_1=");
    expect(warning).toContain("npm run demo");
  });
});

describe("npm start on a local chain started afresh", () => {
  const from = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266" as const; // anvil's first account
  const delegates = [
    "0x00000000000000000000000000000000000000aa",
    "0x00000000000000000000000000000000000000bb",
  ] as const;
  /** Both runs delegate at this block, as its only log: the same chain id, block number and log index. */
  const BLOCK = 40n;

  /** Mines up to BLOCK - 1, then `data` as the only transaction of BLOCK, then 40 more blocks. */
  async function writeAtBlock(url: string, to: Address, data: Hex): Promise<void> {
    const chain = chainClient(url);
    await chain.setIntervalMining({ interval: 0 });
    const head = await chain.getBlockNumber();
    expect(head, "the registries' installation fits before the block").toBeLessThan(BLOCK - 1n);
    await rpc(url, "anvil_mine", [toHex(BLOCK - 1n - head)]);
    const hash = await rpc(url, "eth_sendTransaction", [{ from, to, data, gas: toHex(500_000) }]);
    await rpc(url, "evm_mine", []);
    const receipt = (await rpc(url, "eth_getTransactionReceipt", [hash])) as { status: string; blockNumber: string };
    expect(receipt).toMatchObject({ status: "0x1", blockNumber: toHex(BLOCK) });
    // Ponder backfills (and keeps in its sync cache) up to its finality depth below the head; the
    // rest comes live and is not kept. The block must be backfilled.
    await rpc(url, "anvil_mine", [toHex(ponderFinalityDepth(31337) + 10)]);
    await chain.setIntervalMining({ interval: 1 });
  }

  it("answers the new chain's delegations, not the logs an earlier chain left at the same blocks", async () => {
    const rpcPort = await freePort();
    const dir = newDir();
    for (const [run, delegate] of delegates.entries()) {
      const anvil = await startAnvil({ port: rpcPort });
      started.push(anvil);
      const { v2 } = await installRegistries(anvil.url);
      await writeAtBlock(
        anvil.url,
        v2,
        encodeFunctionData({ abi: abis.v2, functionName: "delegateAll", args: [delegate, zeroHash, true] }),
      );
      const { child, port, output } = await launch({ PONDER_RPC_URL_31337: anvil.url }, dir);
      const url = `http://127.0.0.1:${port}`;
      await waitFor(
        `run ${run + 1} to be ready`,
        async () => {
          if (!child.running) throw new GiveUp(`the service exited:\n${output()}`);
          return (await fetch(`${url}/ready`)).status === 200 ? true : undefined;
        },
        120_000,
      );
      for (const to of delegates) {
        const query = `${url}/registry/v2/check/all?chainId=31337&from=${from}&to=${to}`;
        // Ready is the backfill done; the blocks after it come live, a moment later.
        const res = await waitFor(
          `run ${run + 1} to index block ${BLOCK}`,
          async () => {
            const answer = await fetch(query);
            return BigInt(answer.headers.get("x-indexed-block") ?? -1) >= BLOCK ? answer : undefined;
          },
          60_000,
        );
        const block = BigInt(res.headers.get("x-indexed-block")!);
        const onChain = await callView(anvil.url, abis.v2, v2, "checkDelegateForAll", [to, from, zeroHash], block);
        expect(`${run + 1}: ${to} ${await res.text()}`).toBe(`${run + 1}: ${to} ${onChain}`);
        expect(onChain).toBe(to === delegate);
      }
      if (run === 1) expect(output()).toContain("chain 31337: the blocks and logs fetched earlier are another chain's");
      await child.stop();
      await anvil.stop();
    }
  });
});
