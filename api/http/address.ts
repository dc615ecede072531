import { isIP } from "node:net";

/**
 * The client a keyless budget belongs to: an IPv4 address, or an IPv6 address's /64 — one
 * subscriber's network, every address of which its owner can use (a /64 counted per address would
 * be 2^64 budgets). An IPv4 address mapped into IPv6 (`::ffff:192.0.2.1`) is the IPv4 address.
 * Undefined for what is not an IP address.
 */
export function budgetHolder(address: string): string | undefined {
  const bare = address.split("%")[0]!;
  const kind = isIP(bare);
  if (kind === 4) return bare;
  if (kind !== 6) return undefined;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped) return mapped[1];
  return `${ipv6Groups(bare).slice(0, 4).join(":")}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address, as lowercase hex without leading zeros. */
function ipv6Groups(address: string): string[] {
  const [head, tail] = address.includes("::") ? address.split("::") : [address, undefined];
  const part = (text: string | undefined) => (text ? text.split(":") : []);
  // A dotted IPv4 ending (::1.2.3.4) holds the last two groups.
  const words = (groups: string[]) =>
    groups.flatMap((g) => {
      if (!g.includes(".")) return [g];
      const [a, b, c, d] = g.split(".").map(Number) as [number, number, number, number];
      return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
    });
  const front = words(part(head));
  const back = words(part(tail));
  const zeros = tail === undefined ? [] : Array<string>(8 - front.length - back.length).fill("0");
  return [...front, ...zeros, ...back].map((g) => Number.parseInt(g, 16).toString(16));
}
