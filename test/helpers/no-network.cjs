/**
 * Preloaded into every Node process of a test (NODE_OPTIONS=--require): a connection to, or a name
 * lookup of, anything but this machine is refused and written to NO_NETWORK_LOG, so the test can
 * show that what it ran needed no network. CommonJS: --require loads it before any ESM.
 */
const dns = require("node:dns");
const fs = require("node:fs");
const net = require("node:net");

const log = process.env.NO_NETWORK_LOG;
const local = (host) =>
  host === undefined ||
  host === "localhost" ||
  /^127\./.test(host) ||
  host === "::1" ||
  host === "0.0.0.0" ||
  host === "::";
const record = (what) => {
  if (log) fs.appendFileSync(log, `${process.pid} ${process.argv.slice(1, 3).join(" ")}: ${what}\n`);
};

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  const options =
    args[0] !== null && typeof args[0] === "object"
      ? Array.isArray(args[0])
        ? args[0][0]
        : args[0]
      : { port: args[0], host: args[1] };
  if (options && options.path === undefined && !local(options.host)) {
    record(`connect to ${options.host}:${options.port}`);
    process.nextTick(() => this.destroy(new Error(`no network in this test: ${options.host}`)));
    return this;
  }
  return connect.apply(this, args);
};

const lookup = dns.lookup;
dns.lookup = function (host, ...rest) {
  if (!local(host)) record(`name lookup of ${host}`);
  return lookup.call(this, host, ...rest);
};
