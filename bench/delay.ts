/**
 * From a block's inclusion of a new delegation to the API answering it: a delegateAll is sent at a
 * random moment within a block interval; the receipt and the API's check/all are both polled every
 * few milliseconds; the delay is from the moment the receipt was first seen (the block mined) to the
 * first `true`, and to the change feed's event on each stream asked (open before the delegation is sent).
 */
import { createParser } from "eventsource-parser";
import { encodeFunctionData, type Hex, toHex, zeroHash } from "viem";
import { registryV2Abi } from "../core/abi/registryV2";
import { waitFor } from "../devkit/processes";
import { Rng } from "../devkit/random";
import { chainClient, rpc } from "../devkit/rpc";
import { randomAddress } from "./dataset";
import { CHAIN_ID, type Chain } from "./stack";

const POLL_MS = 10;

/** The time at which `probe` first holds, polled every POLL_MS. */
async function when(what: string, probe: () => Promise<boolean>): Promise<number> {
  const deadline = Date.now() + 60_000;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((ok) => setTimeout(ok, POLL_MS));
  }
  return Date.now();
}

/**
 * The moment the change feed's stream at `base` (GET /registry/feed, filtered to `to`'s side) sends
 * its first event: the stream is open before the delegation is sent.
 */
async function streamed(
  base: string,
  headers: Record<string, string>,
  to: string,
): Promise<{ arrived: Promise<number> }> {
  const stop = new AbortController();
  const res = await fetch(`${base}/registry/feed?wallet=${to}&role=to`, { headers, signal: stop.signal });
  if (res.status !== 200) throw new Error(`GET /registry/feed: ${res.status} ${await res.text()}`);
  const arrived = new Promise<number>((ok, fail) => {
    const deadline = setTimeout(() => fail(new Error(`no event from ${base}/registry/feed in 60 s`)), 60_000);
    const parser = createParser({
      onEvent: () => {
        clearTimeout(deadline);
        ok(Date.now());
        stop.abort();
      },
    });
    const decoder = new TextDecoder();
    (async () => {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>)
        parser.feed(decoder.decode(chunk, { stream: true }));
    })().catch(() => {});
  });
  return { arrived };
}

/** Each sample's delays: to the API's first `true`, and to each stream's event, by its base URL. */
export type Delays = { answered: number[]; streamed: Record<string, number[]> };

/**
 * Milliseconds from each of `samples` new delegations' block to the API's first `true` (see the
 * module's head), and to the event of the change feed's stream on each of `streams` (base URLs).
 */
export async function measureDelays(
  { anvil, registries }: Chain,
  apiUrl: string,
  headers: Record<string, string>,
  samples: number,
  seed: number,
  streams: readonly string[] = [],
): Promise<Delays> {
  const rng = new Rng(seed);
  const chain = chainClient(anvil.url);
  const [from] = await chain.getAddresses();
  const delays: Delays = { answered: [], streamed: Object.fromEntries(streams.map((s) => [s, []])) };
  for (let i = 0; i < samples; i++) {
    // Start at a random point of a block interval, not always just after a block.
    const block = await chain.getBlockNumber();
    await waitFor("the next block", async () => ((await chain.getBlockNumber()) !== block ? true : undefined));
    await new Promise((ok) => setTimeout(ok, rng.int(900)));
    const to = randomAddress(rng);
    // Open (its start pinned) before the delegation is sent.
    const events = await Promise.all(streams.map((base) => streamed(base, headers, to)));
    const data = encodeFunctionData({ abi: registryV2Abi, functionName: "delegateAll", args: [to, zeroHash, true] });
    const transaction = { from, to: registries.v2, data, gas: toHex(300_000) };
    const hash = (await rpc(anvil.url, "eth_sendTransaction", [transaction])) as Hex;
    const path = `/registry/v2/check/all?chainId=${CHAIN_ID}&to=${to}&from=${from!.toLowerCase()}`;
    const [included, answered] = await Promise.all([
      when("the delegation's block", async () => (await rpc(anvil.url, "eth_getTransactionReceipt", [hash])) !== null),
      when("the API to answer true", async () => (await (await fetch(apiUrl + path, { headers })).text()) === "true"),
    ]);
    delays.answered.push(answered - included);
    const at = await Promise.all(events.map((e) => e.arrived));
    for (const [j, base] of streams.entries()) delays.streamed[base]!.push(at[j]! - included);
  }
  return delays;
}
