/**
 * A TCP relay for the tests' hosts apart (test/helpers/netns.ts), run as a process of its own where
 * it is to listen (in a network namespace: `ip netns exec`):
 *
 *   node relay.mjs <listen> <target> <delayMs> [<listen> <target> <delayMs> ...]
 *
 * each endpoint `tcp:<host>:<port>` or `unix:<path>` (a Unix socket is a file: the way between
 * namespaces that share no network). What it reads on either side it writes on the other `delayMs`
 * later, in order: the one-way delay between two hosts, which tc netem would add on a kernel that
 * has it. Prints "relaying" once every route listens. Plain JavaScript: it starts in milliseconds.
 */
import { rmSync } from "node:fs";
import { connect, createServer } from "node:net";

/** The socket address an endpoint names. */
function endpoint(text) {
  if (text.startsWith("unix:")) return { path: text.slice("unix:".length) };
  const match = /^tcp:(.+):(\d+)$/.exec(text);
  if (match === null) throw new Error(`not an endpoint (tcp:<host>:<port> or unix:<path>): ${text}`);
  return { host: match[1], port: Number(match[2]) };
}

/** What `from` reads, written on `to` `delayMs` later; its end too. Both sides are half-open. */
function forward(from, to, delayMs) {
  const later = (f) => (delayMs > 0 ? setTimeout(f, delayMs) : f());
  from.on("data", (chunk) => later(() => to.write(chunk)));
  from.on("end", () => later(() => to.end()));
  // A side that fails takes the other down: the relayed connection fails as a direct one would.
  from.on("error", () => to.destroy());
  from.on("close", (failed) => failed && to.destroy());
}

const args = process.argv.slice(2);
if (args.length === 0 || args.length % 3 !== 0) {
  console.error("usage: node relay.mjs <listen> <target> <delayMs> ...");
  process.exit(2);
}
let listening = 0;
for (let i = 0; i < args.length; i += 3) {
  const [listen, target, delayMs] = [endpoint(args[i]), endpoint(args[i + 1]), Number(args[i + 2])];
  const server = createServer({ allowHalfOpen: true }, (client) => {
    const upstream = connect({ ...target, allowHalfOpen: true });
    forward(client, upstream, delayMs);
    forward(upstream, client, delayMs);
  });
  server.on("error", (error) => {
    console.error(`relay ${args[i]}: ${error.message}`);
    process.exit(1);
  });
  if (listen.path !== undefined) rmSync(listen.path, { force: true });
  server.listen(listen, () => {
    if (++listening === args.length / 3) console.log("relaying");
  });
}
