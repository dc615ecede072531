import { KEYLESS, type Policy, type RateLimiter, slide } from "./limit";

/**
 * The keyless limit kept in this process's memory: exact for one process (PGlite runs only one).
 *
 * Memory is bounded: the map is ordered by each client's latest request, so clients whose window
 * has emptied are dropped from its front as time passes; past `maxClients` clients inside one
 * window, the one seen longest ago is forgotten (and so gets a fresh window) rather than the map
 * growing without bound.
 */
export function memoryLimiter(policy: Policy = KEYLESS, maxClients = 100_000): RateLimiter {
  const clients = new Map<string, number[]>();
  return {
    async take(client, count = 1) {
      const now = Date.now();
      for (const [oldest, hits] of clients) {
        if (hits.at(-1)! > now - policy.windowMs) break;
        clients.delete(oldest);
      }
      const { verdict, hits } = slide(clients.get(client) ?? [], now, policy, count);
      if (verdict.allowed) {
        // Re-inserted: it moves to the back, the map stays ordered by latest request.
        clients.delete(client);
        if (clients.size >= maxClients) clients.delete(clients.keys().next().value!);
        clients.set(client, hits);
      }
      return verdict;
    },
    async close() {
      clients.clear();
    },
  };
}
