import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

/**
 * The client a keyless budget belongs to: an IPv4 address, or an IPv6 address's /64 — one
 * subscriber's network, every address of which its owner can use (a /64 counted per address would
 * be 2^64 budgets). An IPv4 address mapped into IPv6 (`::ffff:192.0.2.1`, `::ffff:c000:201`) is the
 * IPv4 address. An IPv6 zone (`fe80::1%eth0`) names the host's interface, not the client: it is
 * dropped. Undefined for what is not an IP address.
 */
export function budgetHolder(address: string): string | undefined {
  const percent = address.indexOf("%");
  const bare = percent < 0 ? address : address.slice(0, percent);
  // Node's check first: it takes the standard spellings only, where ipaddr.js also takes inet_aton's
  // (`127.1`, `0x7f.0.0.1`, `010.0.0.1`), each another name for a budget.
  const kind = isIP(bare);
  if (kind === 0 || (percent >= 0 && (kind === 4 || percent === address.length - 1))) return undefined;
  const ip = ipaddr.process(bare);
  if (ip.kind() === "ipv4") return ip.toString();
  const network = (ip as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16));
  return `${network.join(":")}::/64`;
}
