/**
 * The subscribers of bench/subscribers.ts, in a process of their own (a load generator, its CPU
 * counted apart): opens `count` streams of GET /registry/feed at `base` with mixed filters, reads
 * and drops what they send, prints `open <n>` once every stream has its 200, then `events <n>`
 * every second until killed. Arguments: base URL, count, API key, seed, the chain id, wallets.
 */
import { request } from "node:http";
import { Rng } from "../devkit/random";

const [base, countText, key, seedText, chainId, ...wallets] = process.argv.slice(2);
const count = Number(countText);
const rng = new Rng(Number(seedText));

/** A stream's filters: the chain, a version, a wallet's side, a type, finalized delivery, or none. */
function filters(): string {
  const wallet = rng.pick(wallets);
  return rng.pick([
    "",
    `chainId=${chainId}`,
    `version=${rng.pick(["v1", "v2"])}`,
    `wallet=${wallet}&role=${rng.pick(["from", "to", "either"])}`,
    `wallet=${wallet}`,
    "type=DelegateAll,ERC721",
    `chainId=${chainId}&delivery=finalized`,
  ]);
}

let open = 0;
let events = 0;
let failed = 0;
for (let i = 0; i < count; i++) {
  const req = request(`${base}/registry/feed?${filters()}`, { headers: { "X-API-KEY": key! }, agent: false }, (res) => {
    if (res.statusCode !== 200) {
      failed++;
      console.log(`refused ${res.statusCode}`);
      res.resume();
      return;
    }
    if (++open === count) console.log(`open ${open}`);
    // An event's first line is its id; a chunk may begin with one, or split "\nid:" with the last.
    let carry = "\n";
    res.on("data", (chunk: Buffer) => {
      const text = carry + chunk.toString("latin1");
      events += text.split("\nid:").length - 1;
      carry = text.slice(-3);
    });
  });
  req.on("error", () => failed++);
  req.end();
  // A few hundred at a time: the server's accept queue is not the figure.
  if (i % 200 === 199) await new Promise((ok) => setTimeout(ok, 20));
}
setInterval(() => console.log(`events ${events} open ${open} failed ${failed}`), 1_000);
