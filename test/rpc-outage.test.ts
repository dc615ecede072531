/**
 * RPC outages. The indexer's RPC drops connections, then answers 429, then 500, then
 * malformed JSON, for a minute in all, while delegations keep arriving on chain. Throughout, the
 * API answers from what it has indexed, and each answer is the contract's at the block it reports;
 * afterwards indexing resumes by itself and the history holds each event once. With two RPC URLs
 * of which one is down, the indexer keeps up through the other. While the faults hold indexing back,
 * the chains endpoint reports the chain `behind` (and, on Postgres, an API replica's /ready says so).
 */

import { type Address, zeroHash } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Anvil, startAnvil } from "../devkit/anvil";
import { ask } from "../devkit/ask";
import { abis, installRegistries } from "../devkit/oracle";
import { waitFor } from "../devkit/processes";
import { callView, chainClient } from "../devkit/rpc";
import { sendWrite } from "../devkit/send";
import { type Service, startReplica, startService } from "../devkit/service";
import { historyMismatches } from "./helpers/history";
import { type Fault, type RpcProxy, startRpcProxy } from "./helpers/rpc-proxy";

const CHAIN_ID = 31337;
const PHASE_MS = 15_000;
/** Short, so that the faults make the chain `behind` well within them. */
const BEHIND_AFTER_SECONDS = 8;
const FAULTS: [string, Fault][] = [
  ["connections dropped", { drop: true }],
  [
    "429 Too Many Requests",
    { status: 429, body: '{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"rate limited"}}' },
  ],
  ["500 Internal Server Error", { status: 500, body: "upstream failure" }],
  ["malformed JSON", { status: 200, body: '{"jsonrpc":"2.0","id":1,"result":{"number":"0x' }],
];

describe("the indexer's RPC fails", () => {
  let anvil: Anvil;
  let registries: { v1: Address; v2: Address };
  let accounts: Address[];
  /** What to stop afterwards, in reverse. */
  const started: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    anvil = await startAnvil({ chainId: CHAIN_ID });
    registries = await installRegistries(anvil.url);
    accounts = await chainClient(anvil.url).getAddresses();
  });

  afterAll(async () => {
    for (const stop of started.reverse()) await stop();
    await anvil?.stop();
  });

  /** account i delegates everything to account j; the block it landed in. */
  const delegate = (i: number, j: number) =>
    sendWrite(anvil.url, abis.v2, accounts[i]!, registries.v2, "delegateAll", [accounts[j]!, zeroHash, true]);

  /** The service's answer for (i → j), and the contract's at the block the answer reports. */
  async function compare(service: Service, i: number, j: number) {
    const a = await ask(
      service.url,
      `/registry/v2/check/all?chainId=${CHAIN_ID}&from=${accounts[i]}&to=${accounts[j]}`,
      { headers: service.headers, timeoutMs: 0, reask: false },
    );
    const expected =
      a.block === undefined
        ? undefined
        : String(
            await callView(
              anvil.url,
              abis.v2,
              registries.v2,
              "checkDelegateForAll",
              [accounts[j]!, accounts[i]!, zeroHash],
              a.block,
            ),
          );
    return { status: a.status, body: a.text, block: a.block, expected };
  }

  const indexed = async (service: Service) => (await compare(service, 0, 0)).block ?? -1n;

  it("keeps answering from what it indexed, honestly, for a minute of faults; then catches up by itself", async () => {
    let fault: Fault | undefined;
    const proxy: RpcProxy = await startRpcProxy(anvil.url, () => fault);
    started.push(proxy.close);
    const service = await startService({
      rpc: { [CHAIN_ID]: proxy.url },
      env: { BEHIND_AFTER_SECONDS: String(BEHIND_AFTER_SECONDS) },
    });
    started.push(service.stop);
    // On Postgres, an API replica too: its /ready names a chain behind and stays 200.
    const replica = process.env.DATABASE_URL
      ? await startReplica(service, { BEHIND_AFTER_SECONDS: String(BEHIND_AFTER_SECONDS) })
      : undefined;
    if (replica) started.push(replica.stop);
    const first = await delegate(1, 2);
    await waitFor("the first delegation to be indexed", async () =>
      (await indexed(service)) >= first ? true : undefined,
    );
    const status = async () => {
      const listed = JSON.parse((await ask(service.url, "/registry/chains", { headers: service.headers })).text) as {
        chainId: number;
        status: string;
        lagSeconds: number;
      }[];
      const ready = replica ? await fetch(`${replica.url}/ready`) : undefined;
      return {
        ...listed.find((c) => c.chainId === CHAIN_ID)!,
        replicaReady: ready && { status: ready.status, text: await ready.text() },
      };
    };
    expect((await status()).status, "before the faults").toBe("live");
    const seen: Awaited<ReturnType<typeof status>>[] = [];

    const during: { block?: bigint; written: bigint }[] = [];
    let last = first;
    let pair = 3;
    for (const [name, f] of FAULTS) {
      fault = f;
      const until = Date.now() + PHASE_MS;
      while (Date.now() < until) {
        // The chain moves on: a new delegation, asked about at once.
        const j = pair++ % 20;
        last = await delegate(1, j);
        const answer = await compare(service, 1, j);
        during.push({ block: answer.block, written: last });
        expect(answer.status, `${name}: ${answer.body}`).toBe(200);
        expect(answer.body, `${name}: the answer at X-Indexed-Block ${answer.block}`).toBe(answer.expected);
        expect(service.child.running, `${name}: the service is running`).toBe(true);
        seen.push(await status());
        await new Promise((ok) => setTimeout(ok, 1_000));
      }
    }
    // The faults held indexing back: most answers came from before the write just asked about, and said so.
    expect(during.filter((a) => a.block! < a.written).length).toBeGreaterThan(during.length / 2);

    // The chains endpoint (and a replica's /ready) said so while the indexed block grew old.
    const behind = seen.filter((s) => s.status === "behind");
    expect(behind.length, `statuses during the faults: ${JSON.stringify(seen.map((s) => s.status))}`).toBeGreaterThan(
      seen.length / 2,
    );
    expect(behind.every((s) => s.lagSeconds > BEHIND_AFTER_SECONDS)).toBe(true);
    if (replica) {
      expect(
        behind.some(
          (s) => s.replicaReady!.status === 200 && s.replicaReady!.text.includes(`chain ${CHAIN_ID} is behind`),
        ),
        JSON.stringify(behind.map((s) => s.replicaReady)),
      ).toBe(true);
    }

    fault = undefined;
    await waitFor(
      "indexing to resume by itself",
      async () => ((await indexed(service)) >= last ? true : undefined),
      120_000,
    );
    await waitFor(
      "the chain to be live again",
      async () => ((await status()).status === "live" ? true : undefined),
      60_000,
    );
    for (let j = 2; j < 20; j++) {
      const answer = await compare(service, 1, j);
      expect(answer.body, `1 → ${j} at block ${answer.block}`).toBe(answer.expected);
      expect(answer.body).toBe("true");
    }
    await service.child.stop();
    const history = await historyMismatches(service, anvil.url, registries);
    expect(history.events.v2).toBeGreaterThan(FAULTS.length * 5);
    expect(history.mismatches).toEqual([]);
  });

  it("with two RPC URLs, one of them down, indexes through the other", async () => {
    const down = await startRpcProxy(anvil.url, () => ({ drop: true }));
    const up = await startRpcProxy(anvil.url);
    started.push(down.close, up.close);
    const service = await startService({ rpc: { [CHAIN_ID]: `${down.url},${up.url}` } });
    started.push(service.stop);
    for (let j = 0; j < 5; j++) {
      const block = await delegate(5, j);
      const answer = await waitFor(
        `delegation 5 → ${j} to be indexed`,
        async () => {
          const a = await compare(service, 5, j);
          return a.block !== undefined && a.block >= block ? a : undefined;
        },
        30_000,
      );
      expect(answer.body).toBe(answer.expected);
      expect(answer.body).toBe("true");
    }
    expect(down.calls.length, "the broken URL was tried").toBeGreaterThan(0);
    expect(up.calls.some((c) => c.method === "eth_getLogs" || c.method === "eth_getBlockByNumber")).toBe(true);
  });
});
