import { lookup as dnsLookup } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";

/**
 * Where webhooks may go. A webhook's URL is the client's to choose, and the service sends to it
 * from inside the operator's network: to loopback, a private network, link-local (the clouds'
 * metadata at 169.254.169.254 and fd00:ec2::254) or any other special range it would reach what
 * the internet cannot. Only public unicast addresses are allowed, unless the operator allows the
 * rest (WEBHOOK_ALLOW_PRIVATE). A name is checked when it is resolved for a delivery, every time
 * (`guardedLookup`): a name that resolved to a public address yesterday may not today.
 */

/**
 * The special range an IP address is in (ipaddr.js's name: "loopback", "private", "linkLocal",
 * "uniqueLocal", "rfc6052", …), or undefined for a public unicast address. An IPv4 address mapped
 * into IPv6 is judged as the IPv4 address; every IPv6 range that embeds or relays to IPv4 (NAT64,
 * 6to4, Teredo) is special, as its IPv4 side could be private.
 */
export function specialRange(address: string): string | undefined {
  const percent = address.indexOf("%");
  const bare = percent < 0 ? address : address.slice(0, percent);
  if (isIP(bare) === 0) return "not an IP address";
  const range = ipaddr.process(bare).range();
  return range === "unicast" ? undefined : range;
}

/** Why `text` cannot be a webhook's URL, or undefined when it can (its host is checked again at delivery). */
export function webhookUrlProblem(text: string, allowPrivate: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "not an absolute URL";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "only http and https URLs receive webhooks";
  // A password in the URL would be shown wherever the URL is (lists, logs): a header or the path's
  // token carries it instead.
  if (url.username !== "" || url.password !== "") return "a URL with a user name or password";
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  if (allowPrivate || isIP(host) === 0) return undefined;
  const range = specialRange(host);
  return range && `${host} is not a public address (${range})`;
}

/**
 * A `lookup` for node:http's requests that refuses a name resolving to any special address (every
 * address it resolves to, so that a client cannot mix a public one in): the connection is then made
 * to the address checked, not to one a second resolution gives.
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const refused = allowPrivate ? undefined : addresses.find((a) => specialRange(a.address) !== undefined);
      if (refused) {
        const range = specialRange(refused.address);
        const reason = `${hostname} resolves to ${refused.address} (${range}), not a public address`;
        return callback(Object.assign(new Error(reason), { code: "EADDRNOTPUBLIC" }), []);
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname}: no address`), { code: "ENOTFOUND" }), []);
      callback(null, first.address, first.family);
    });
  };
}
