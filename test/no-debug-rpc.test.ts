/**
 * v1 `revokeDelegate(x)` made by a contract wallet, indexed through an RPC without the debug
 * namespace (docs/chains.md, "RPC requirement for v1"). The event is `RevokeDelegate(wallet, wallet)`; the
 * transaction's input is the wallet's `forward(…)`, so only `debug_traceTransaction` names `x`.
 *
 * The service runs against the real registries on anvil, through a proxy that answers every
 * `debug_*` call as an RPC without that namespace does (JSON-RPC error -32601 with the request's
 * id, per call of a batch) and forwards everything else:
 *
 * 1. indexing live, it answers right up to the block before the revocation (a direct
 *    revokeDelegate and the delegations need no trace), then stops with an error that names the
 *    transaction and `debug_traceTransaction`; no answer ever reports the revocation's block or a
 *    later one;
 * 2. started again on the same RPC, with the revocation now in its backfill, it stops the same way
 *    at the same transaction: it never skips it;
 * 3. control: the proxy lets `debug_*` through and the same service is started again; it indexes
 *    past the revocation and answers (x, wallet) as the contract does at the block it reports.
 */

import { type Address, encodeFunctionData, getAddress, type Hex, toHex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Anvil, startAnvil } from "../devkit/anvil";
import { ask as request } from "../devkit/ask";
import { abis, installRegistries } from "../devkit/oracle";
import { GiveUp, waitFor } from "../devkit/processes";
import { callView, chainClient, rpc } from "../devkit/rpc";
import { sendAll, sendTx } from "../devkit/send";
import { plainOutput, type Service, startService } from "../devkit/service";
import { ponderFinalityDepth } from "../ponder/ponder-0.16.10";
import { type RecordedCall, type Reply, type RpcProxy, startRpcProxy } from "./helpers/rpc-proxy";
import { compileWallet } from "./helpers/v1/wallet";

const CHAIN_ID = 31337;
/** Ponder's finality depth for this chain: blocks older than this below the head are backfilled. */
const FINALITY = ponderFinalityDepth(CHAIN_ID);
/** Blocks kept clear of the finality boundary, so that the head's own advance does not matter. */
const FINALITY_MARGIN = BigInt(FINALITY + 2);
/** How long the service may take to stop by itself after the revocation (Ponder's shutdown grace is 5 s). */
const EXIT_WITHIN_MS = 45_000;
const log = (text: string) => console.log(`[no-debug-rpc] ${text}`);

// ---------------------------------------------------------------------------------------------
// An RPC without the debug namespace

type DebuglessRpc = RpcProxy & {
  /** While true, every debug_* call is answered "method not found"; otherwise everything is forwarded. */
  refuseDebug: boolean;
  /** The debug_* calls answered "method not found", in order. */
  readonly refused: RecordedCall[];
};

/** What geth (and most public RPCs) answer for a namespace they do not serve. */
const methodNotFound = (method: string): Reply => ({
  error: { code: -32601, message: `the method ${method} does not exist/is not available` },
});

/** A proxy in front of `target` that answers as an RPC without the debug namespace while `refuseDebug`. */
async function startDebuglessRpc(target: string): Promise<DebuglessRpc> {
  const refused: RecordedCall[] = [];
  const reply = (call: RecordedCall) => {
    if (!call.method.startsWith("debug_")) return undefined;
    refused.push(call);
    return methodNotFound(call.method);
  };
  const proxy: DebuglessRpc = Object.assign(
    await startRpcProxy(target, () => (proxy.refuseDebug ? { reply } : undefined)),
    { refuseDebug: true, refused },
  );
  return proxy;
}

// ---------------------------------------------------------------------------------------------
// Watching the service's answers

type Observed = { status: number; block: bigint | undefined; body: string };

/**
 * Asks `path` of the service every 200 ms until stopped (following it to a new port on a restart);
 * a refused connection is recorded as status 0.
 */
function watch(service: Service, path: string) {
  const seen: Observed[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      try {
        const a = await request(service.url, path, { headers: service.headers, timeoutMs: 5_000, reask: false });
        seen.push({ status: a.status, block: a.block, body: a.text });
      } catch {
        seen.push({ status: 0, block: undefined, body: "" });
      }
      await new Promise((ok) => setTimeout(ok, 200));
    }
  })();
  return {
    seen,
    stop: async () => {
      running = false;
      await loop;
      return seen;
    },
  };
}

const summary = (seen: Observed[]) => {
  const counts = new Map<string, number>();
  for (const o of seen) {
    const key = o.status === 0 ? "no connection" : o.status === 200 ? `200 ${o.body}` : String(o.status);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const blocks = seen.flatMap((o) => (o.block === undefined ? [] : [o.block]));
  const highest = blocks.reduce((max, b) => (b > max ? b : max), -1n);
  return (
    `${[...counts].map(([k, n]) => `${n}× ${k}`).join(", ")}; highest X-Indexed-Block ` +
    `${highest < 0n ? "none" : highest}`
  );
};

// ---------------------------------------------------------------------------------------------

describe("v1 revokeDelegate through a contract wallet, on an RPC without debug_traceTransaction", () => {
  let anvil: Anvil;
  let registries: { v1: Address; v2: Address };
  let proxy: DebuglessRpc;
  let service: Service | undefined;
  /** The direct writer (a vault), its revoked and its kept delegate; the wallet's sender and delegate x. */
  let vault: Address, revoked: Address, kept: Address, sender: Address, x: Address;
  let wallet: Address;
  let walletAbi: ReturnType<typeof compileWallet>["abi"];
  let directRevoke: { block: bigint; hash: Hex };
  let walletDelegation: { block: bigint; hash: Hex };
  /** The revocation only a call trace shows; set by the first test. */
  let walletRevoke: { block: bigint; hash: Hex } | undefined;

  const v1Call = (functionName: string, args: readonly unknown[]) =>
    encodeFunctionData({ abi: abis.v1, functionName, args } as never);
  const throughWallet = (functionName: string, args: readonly unknown[]) =>
    sendTx(
      anvil.url,
      sender,
      wallet,
      encodeFunctionData({
        abi: walletAbi,
        functionName: "forward",
        args: [registries.v1, v1Call(functionName, args)],
      }),
    );

  const checkPath = (delegate: Address, of: Address) =>
    `/registry/v1/check/all?chainId=${CHAIN_ID}&delegate=${delegate}&vault=${of}`;
  /** The contract's checkDelegateForAll(delegate, vault) at `block`. */
  const contractSays = async (delegate: Address, of: Address, block: bigint) =>
    String(await callView(anvil.url, abis.v1, registries.v1, "checkDelegateForAll", [delegate, of], block));

  /** One answer of the service, and the contract's at the block it reports. */
  async function ask(delegate: Address, of: Address) {
    const a = await request(service!.url, checkPath(delegate, of), {
      headers: service!.headers,
      timeoutMs: 10_000,
      reask: false,
    });
    return {
      status: a.status,
      body: a.text,
      block: a.block,
      expected: a.status === 200 && a.block !== undefined ? await contractSays(delegate, of, a.block) : undefined,
    };
  }

  /** What exitOf gave, as words. */
  const exitText = (exited: number | null | Error) =>
    typeof exited === "number"
      ? `ponder exited with code ${exited}`
      : `ponder still running after ${EXIT_WITHIN_MS / 1000} s`;

  /** Waits for the service to exit by itself; its exit code. */
  async function exitOf(s: Service): Promise<number | null> {
    await waitFor("ponder to exit", async () => (s.child.running ? undefined : true), EXIT_WITHIN_MS);
    return s.child.process.exitCode;
  }

  /** Every answer the watcher saw: none reports the revocation's block or a later one, and the 200s are right. */
  async function expectNoAnswerPast(seen: Observed[], label: string) {
    const past = seen.filter((o) => o.block !== undefined && o.block >= walletRevoke!.block);
    expect(past, `${label}: answers reporting block ${walletRevoke!.block} (the revocation) or later`).toEqual([]);
    for (const o of seen.filter((o) => o.status === 200)) {
      expect(o.body, `${label}: (x, wallet) at X-Indexed-Block ${o.block}`).toBe(
        await contractSays(x, wallet, o.block!),
      );
    }
  }

  beforeAll(async () => {
    anvil = await startAnvil({ chainId: CHAIN_ID });
    registries = await installRegistries(anvil.url);
    const accounts = await chainClient(anvil.url).getAddresses();
    [vault, revoked, kept, sender, x] = [accounts[1]!, accounts[2]!, accounts[3]!, accounts[4]!, accounts[5]!];

    // Direct writes: none needs a trace. The direct revokeDelegate emits RevokeDelegate(vault, vault)
    // too, and its transaction's input names the delegate.
    await sendTx(anvil.url, vault, registries.v1, v1Call("delegateForAll", [revoked, true]));
    await sendTx(anvil.url, vault, registries.v1, v1Call("delegateForAll", [kept, true]));
    directRevoke = await sendTx(anvil.url, vault, registries.v1, v1Call("revokeDelegate", [revoked]));

    // The contract wallet, and its delegation to x (a DelegateForAll event: no trace needed either).
    const compiled = compileWallet();
    walletAbi = compiled.abi;
    const deployer = accounts[19]!;
    const nonce = await chainClient(anvil.url).getTransactionCount({ address: deployer, blockTag: "pending" });
    const [deployed] = await sendAll(
      anvil.url,
      [{ from: deployer, data: compiled.bytecode, gas: 1_500_000n, nonce }],
      0,
    );
    expect(deployed!.status, "wallet deployment").toBe("0x1");
    wallet = getAddress(deployed!.contractAddress!);
    walletDelegation = await throughWallet("delegateForAll", [x, true]);
    log(`registry v1 ${registries.v1}; wallet ${wallet}; x ${x}`);
    log(`direct revokeDelegate(${revoked}) by ${vault}: tx ${directRevoke.hash} in block ${directRevoke.block}`);
    log(`wallet delegateForAll(${x}): tx ${walletDelegation.hash} in block ${walletDelegation.block}`);

    proxy = await startDebuglessRpc(anvil.url);
    // The proxy answers as such an RPC does, a batch as a batch, each error with its request's id.
    const post = async (body: unknown) =>
      (await (
        await fetch(proxy.url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        })
      ).json()) as unknown;
    const trace = (id: number) => ({
      jsonrpc: "2.0",
      id,
      method: "debug_traceTransaction",
      params: [walletDelegation.hash, { tracer: "callTracer" }],
    });
    const notFound = (id: number) => ({
      jsonrpc: "2.0",
      id,
      error: { code: -32601, message: "the method debug_traceTransaction does not exist/is not available" },
    });
    expect(await post(trace(7))).toEqual(notFound(7));
    expect(await post([{ jsonrpc: "2.0", id: 8, method: "eth_chainId", params: [] }, trace(9)])).toEqual([
      { jsonrpc: "2.0", id: 8, result: toHex(CHAIN_ID) },
      notFound(9),
    ]);
    proxy.clear();
    proxy.refused.splice(0);
  });

  afterAll(async () => {
    await service?.stop();
    await proxy?.close();
    await anvil?.stop();
  });

  it("indexing live, answers right until the revocation, then stops loudly naming the transaction; never answers past \
it", async () => {
    service = await startService({ rpc: { [CHAIN_ID]: proxy.url } });
    // Before the revocation the service is live and right, the direct revokeDelegate included.
    const before = await waitFor(
      "the wallet's delegation to be indexed",
      async () => {
        const a = await ask(x, wallet);
        return a.status === 200 && a.block! >= walletDelegation.block ? a : undefined;
      },
      60_000,
    );
    expect(before.body, `(x, wallet) at ${before.block}`).toBe(before.expected);
    expect(before.body).toBe("true");
    for (const [delegate, want] of [
      [revoked, "false"],
      [kept, "true"],
    ] as const) {
      const a = await ask(delegate, vault);
      expect(a.status).toBe(200);
      expect(a.body, `(${delegate}, vault) at ${a.block}`).toBe(a.expected);
      expect(a.body).toBe(want);
    }
    expect(proxy.refused, "no trace was needed so far").toEqual([]);

    // The wallet revokes x: only a call trace says so.
    const watcher = watch(service, checkPath(x, wallet));
    walletRevoke = await throughWallet("revokeDelegate", [x]);
    const revoke = walletRevoke;
    log(`wallet revokeDelegate(${x}) through forward(): tx ${revoke.hash} in block ${revoke.block}`);
    expect(await contractSays(x, wallet, revoke.block), "the contract: revoked").toBe("false");
    expect(await contractSays(x, wallet, revoke.block - 1n), "the contract: in force the block before").toBe("true");

    const exited = await exitOf(service).catch((error: Error) => error);
    const seen = await watcher.stop();
    const output = plainOutput(service);
    log(`live: ${exitText(exited)}; answers seen: ${summary(seen)}`);
    const refused = proxy.refused;
    log(
      `live: debug calls refused: ${refused.length} ` +
        `(${refused.map((c) => `${c.method} id ${JSON.stringify(c.id)}`).join(", ")}); calls that came in batches: ` +
        `${proxy.calls.filter((c) => c.batch).length} of ${proxy.calls.length}`,
    );
    const message = output.split("\n").find((line) => line.includes(`v1 revokeDelegate in transaction ${revoke.hash}`));
    log(`live: the error line: ${message?.trim()}`);

    // Loud: the error names the transaction, the method, and the fix.
    expect(output).toContain(`v1 revokeDelegate in transaction ${revoke.hash} (chain ${CHAIN_ID})`);
    expect(message).toContain("debug_traceTransaction");
    expect(output).toContain("Configure an RPC URL for this chain that serves the debug namespace");
    // Only that transaction needed a trace, and Ponder did not retry a "method not found".
    expect(refused.map((c) => [c.method, c.params[0]])).toEqual(
      refused.map(() => ["debug_traceTransaction", revoke.hash]),
    );
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(proxy.calls.some((c) => c.params[0] === directRevoke.hash && c.method.startsWith("debug_"))).toBe(false);
    // It stops (Ponder: a non-retryable indexing error ends the process, code 1)…
    expect(exited, "ponder exits by itself").toBe(1);
    // …and until then never reported the revocation's block: no answer ignored the revocation.
    expect(
      seen.filter((o) => o.status === 200).length,
      "the service answered while it waited for the revocation's block",
    ).toBeGreaterThan(0);
    await expectNoAnswerPast(seen, "live");
  });

  it("started again on the same RPC, with the revocation in its backfill: stops at the same transaction again, never \
skips it", async () => {
    expect(walletRevoke, "the first test made the revocation").toBeDefined();
    const revoke = walletRevoke!;
    // The revocation falls below Ponder's finality depth: it is part of the backfill now.
    await rpc(anvil.url, "anvil_mine", [toHex(FINALITY + 10)]);
    const head = await chainClient(anvil.url).getBlockNumber();
    expect(head - FINALITY_MARGIN, "the revocation lies below Ponder's finality depth").toBeGreaterThan(revoke.block);
    const refusedBefore = proxy.refused.length;

    const watcher = watch(service!, checkPath(x, wallet));
    // It may stop before its HTTP server is up: then restart throws, and the exit is what counts.
    const started = await service!.restart("listening").then(
      () => "listening",
      (error: Error) => error.message.split("\n")[0]!,
    );
    const exited = await exitOf(service!).catch((error: Error) => error);
    const seen = await watcher.stop();
    const output = plainOutput(service!);
    const refused = proxy.refused.slice(refusedBefore);
    log(`restart: ${started}; ${exitText(exited)}; answers seen: ${summary(seen)}`);
    log(`restart: debug calls refused: ${refused.length}`);

    expect(output).toContain(`v1 revokeDelegate in transaction ${revoke.hash} (chain ${CHAIN_ID})`);
    expect(output).toContain("Configure an RPC URL for this chain that serves the debug namespace");
    expect(refused.map((c) => c.params[0])).toEqual(refused.map(() => revoke.hash));
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(exited, "ponder exits by itself").toBe(1);
    await expectNoAnswerPast(seen, "restart");
  });

  it("control: with debug_traceTransaction served, the same service goes on past the revocation and answers it \
right", async () => {
    expect(walletRevoke, "the first test made the revocation").toBeDefined();
    const revoke = walletRevoke!;
    proxy.refuseDebug = false;
    const tracesBefore = proxy.calls.length;
    await service!.restart("ready");
    const after = await waitFor(
      "the revocation's block to be indexed",
      async () => {
        if (!service!.child.running) throw new GiveUp(`ponder exited:\n${plainOutput(service!).slice(-3000)}`);
        const a = await ask(x, wallet);
        return a.status === 200 && a.block! >= revoke.block ? a : undefined;
      },
      60_000,
    );
    const traces = proxy.calls.slice(tracesBefore).filter((c) => c.method === "debug_traceTransaction");
    log(
      `control: (x, wallet) at X-Indexed-Block ${after.block}: ${after.body} (contract: ${after.expected}); traces ` +
        `asked: ${traces.length}`,
    );
    expect(after.body, `(x, wallet) at ${after.block}`).toBe(after.expected);
    expect(after.body).toBe("false");
    for (const [delegate, want] of [
      [revoked, "false"],
      [kept, "true"],
    ] as const) {
      const a = await ask(delegate, vault);
      expect(a.body, `(${delegate}, vault) at ${a.block}`).toBe(a.expected);
      expect(a.body).toBe(want);
    }
    expect(traces.map((c) => c.params[0])).toContain(revoke.hash);
    expect(traces.some((c) => c.params[0] === directRevoke.hash)).toBe(false);
  });
});
