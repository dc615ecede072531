/**
 * From a block's inclusion of a new delegation to the API answering it: a delegateAll is sent at a
 * random moment within a block interval; the receipt and the API's check/all are both polled every
 * few milliseconds; the delay is from the moment the receipt was first seen (the block mined) to the
 * first `true`, to the change feed's event on each stream asked (open before the delegation is sent),
 * and to the first webhook delivery attempt carrying it (its endpoint made before).
 */
import { createParser } from "eventsource-parser";
import { encodeFunctionData, type Hex, toHex, zeroHash } from "viem";
import { registryV2Abi } from "../core/abi/registryV2";
import { waitFor } from "../devkit/processes";
import { Rng } from "../devkit/random";
import { chainClient, rpc } from "../devkit/rpc";
import type { Cleanup } from "./cleanup";
import { randomAddress } from "./dataset";
import { loopbackEndpoint } from "./receiver";
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

/** A webhook endpoint on loopback: when a delivery attempt first carried an entry delegating to each wallet. */
export type Arrivals = { url: string; arrived(to: string): Promise<number> };

/**
 * An endpoint on loopback made on `service` (POST /admin/webhooks) with `filter`, from what is logged
 * next, closed by `cleanup`; each delivery is answered 204 as soon as read.
 */
export async function webhookArrivals(
  service: { url: string; adminToken?: string },
  filter: string,
  cleanup: Cleanup,
): Promise<Arrivals> {
  const waiting = new Map<string, (at: number) => void>();
  const url = await loopbackEndpoint(cleanup, (body, at) => {
    const { entries } = JSON.parse(body) as { entries: { event: { to?: string } }[] };
    for (const to of entries.map((e) => e.event.to?.toLowerCase() ?? "")) {
      waiting.get(to)?.(at);
      waiting.delete(to);
    }
  });
  const made = await fetch(`${service.url}/admin/webhooks`, {
    method: "POST",
    headers: { Authorization: `Bearer ${service.adminToken}`, "Content-Type": "application/json" },
    body: JSON.stringify({ url, filter }),
  });
  if (made.status !== 201) throw new Error(`POST /admin/webhooks: ${made.status} ${await made.text()}`);
  return {
    url,
    arrived: (to) =>
      new Promise((ok, fail) => {
        const deadline = setTimeout(() => fail(new Error(`no webhook delivery to ${to} in 60 s`)), 60_000);
        waiting.set(to.toLowerCase(), (at) => {
          clearTimeout(deadline);
          ok(at);
        });
      }),
  };
}

/**
 * Each sample's delays: to the API's first `true`, to each stream's event (by its base URL), and to
 * the first webhook delivery attempt carrying it.
 */
export type Delays = { answered: number[]; streamed: Record<string, number[]>; delivered: number[] };

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
  webhook?: Arrivals,
): Promise<Delays> {
  const rng = new Rng(seed);
  const chain = chainClient(anvil.url);
  const [from] = await chain.getAddresses();
  const delays: Delays = { answered: [], streamed: Object.fromEntries(streams.map((s) => [s, []])), delivered: [] };
  for (let i = 0; i < samples; i++) {
    // Start at a random point of a block interval, not always just after a block.
    const block = await chain.getBlockNumber();
    await waitFor("the next block", async () => ((await chain.getBlockNumber()) !== block ? true : undefined));
    await new Promise((ok) => setTimeout(ok, rng.int(900)));
    const to = randomAddress(rng);
    // Open (its start pinned) before the delegation is sent.
    const events = await Promise.all(streams.map((base) => streamed(base, headers, to)));
    const delivered = webhook?.arrived(to);
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
    if (delivered) delays.delivered.push((await delivered) - included);
  }
  return delays;
}
