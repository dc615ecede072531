/**
 * `npm start` when an RPC cannot be reached (issue 6): the service stays up, says in its log which
 * RPC failed and how to fix it, retries with growing pauses, answers chain_syncing meanwhile (not
 * a crash), and starts indexing by itself once the RPC answers. With no RPC configured at all it
 * goes to Ethereum mainnet's public RPC and says that this is slow and rate-limited.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { mainnet } from "viem/chains";
import { installRegistries } from "./helpers/oracle";
import { Child, GiveUp, ROOT, freePort, startAnvil, waitFor, type Anvil } from "./helpers/processes";

const ANSI = /\u001b\[[0-9;]*m/g;
const CHECK = "/registry/v2/check/all?chainId=31337&to=0x0000000000000000000000000000000000000002&from=0x0000000000000000000000000000000000000003";

const started: { stop(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.stop()));
});

/** `npm start`'s command with only the given RPC variables, a fresh database and a free port. */
async function launch(rpc: Record<string, string>): Promise<{ child: Child; port: number; output: () => string }> {
  const dir = mkdtempSync(join(tmpdir(), "start-test-"));
  const port = await freePort();
  const cleared = Object.fromEntries(Object.keys(process.env).filter((n) => n.startsWith("PONDER_RPC_URL_")).map((n) => [n, ""]));
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
  started.push({
    stop: async () => {
      await child.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  });
  return { child, port, output: () => child.output.replace(ANSI, "") };
}

const problemOf = async (res: Response) => ({
  status: res.status,
  type: res.headers.get("content-type"),
  retryAfter: res.headers.get("retry-after"),
  body: (await res.json()) as { code?: string; status?: number },
});

describe("npm start with an RPC it cannot reach", () => {
  it("stays up, names the RPC and the fix, retries with backoff, answers chain_syncing; indexes once the RPC answers", async () => {
    const rpcPort = await freePort();
    const rpcUrl = `http://127.0.0.1:${rpcPort}`;
    const { child, port, output } = await launch({ PONDER_RPC_URL_31337: rpcUrl });
    const url = `http://127.0.0.1:${port}`;

    // Three rounds of the message, with the pause growing.
    const said = await waitFor("the unreachable-RPC message three times", async () => {
      if (!child.running) throw new GiveUp(`the service exited:\n${output()}`);
      const lines = output().split("\n").filter((l) => l.includes("cannot reach its RPC"));
      return lines.length >= 3 ? lines : undefined;
    }, 60_000);
    for (const line of said) {
      expect(line).toContain("chain 31337");
      expect(line).toContain(rpcUrl);
      expect(line).toContain("ECONNREFUSED");
      expect(line).toContain("PONDER_RPC_URL_31337=");
      expect(line).toContain("npm run demo");
    }
    expect(said.slice(0, 3).map((l) => /Trying again in (\d+) s/.exec(l)?.[1])).toEqual(["1", "2", "4"]);

    // Meanwhile the API is up and honest: syncing, not down, not a guess.
    const check = await problemOf(await fetch(url + CHECK));
    expect(check).toMatchObject({ status: 503, type: "application/problem+json", retryAfter: "5", body: { code: "chain_syncing", status: 503 } });
    const v1 = await problemOf(await fetch(`${url}/registry/v1/0x0000000000000000000000000000000000000002?chainId=31337`));
    expect(v1).toMatchObject({ status: 503, body: { code: "chain_syncing" } });
    // A chain it is not configured for is still unsupported_chain, not syncing.
    expect((await problemOf(await fetch(`${url}/registry/v2/check/all?chainId=10&to=0x0000000000000000000000000000000000000002&from=0x0000000000000000000000000000000000000003`))).body.code).toBe("unsupported_chain");
    expect((await fetch(`${url}/health`)).status).toBe(200);
    expect((await fetch(`${url}/ready`)).status).toBe(503);
    const chains = (await (await fetch(`${url}/registry/chains`)).json()) as { chainId: number; status: string; indexedBlock: unknown }[];
    expect(chains).toEqual([expect.objectContaining({ chainId: 31337, status: "syncing", indexedBlock: null })]);
    expect(child.running).toBe(true);
    expect(output()).not.toMatch(/Build failed|uncaught|unhandled/i);

    // The RPC comes up: the service starts indexing by itself, on the same port.
    const anvil: Anvil = await startAnvil({ port: rpcPort });
    started.push(anvil);
    await installRegistries(anvil.url);
    await waitFor("the service to be ready after the RPC came up", async () => {
      if (!child.running) throw new GiveUp(`the service exited:\n${output()}`);
      return (await fetch(`${url}/ready`)).status === 200 ? true : undefined;
    }, 120_000);
    const answered = await fetch(url + CHECK);
    expect(answered.status).toBe(200);
    expect(await answered.text()).toBe("false");
    expect(answered.headers.get("x-indexed-block")).toMatch(/^\d+$/);
  });

  it("with no RPC configured: Ethereum mainnet through viem's public RPC, and the log says it is slow and rate-limited", async () => {
    const { child, output } = await launch({});
    const warning = await waitFor("the public-RPC warning", async () => {
      if (!child.running) throw new GiveUp(`the service exited:\n${output()}`);
      return output().split("\n").find((l) => l.includes("No PONDER_RPC_URL_<chainId> is set"));
    }, 60_000);
    expect(warning).toContain(mainnet.rpcUrls.default.http[0]);
    expect(warning).toContain("slow and rate-limited");
    expect(warning).toContain("PONDER_RPC_URL_1=");
    expect(warning).toContain("npm run demo");
  });
});
