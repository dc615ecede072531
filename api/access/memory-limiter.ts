import { KEYLESS, type Policy, type RateLimiter, type Spend, slide } from "./limit";

/**
 * The keyless budget kept in this process's memory: exact for one process (PGlite runs only one).
 *
 * Memory is bounded: the map is ordered by each client's latest spend, so clients whose window has
 * emptied are dropped from its front as time passes; past `maxClients` clients inside one window,
 * the one seen longest ago is forgotten (and so gets a fresh window) rather than the map growing
 * without bound.
 */
export function memoryLimiter(policy: Policy = KEYLESS, maxClients = 100_000): RateLimiter {
  const clients = new Map<string, Spend[]>();
  const spend = (client: string, units: number, force: boolean) => {
    const now = Date.now();
    for (const [oldest, spends] of clients) {
      if (spends.at(-1)!.at > now - policy.windowMs) break;
      clients.delete(oldest);
    }
    const step = slide(clients.get(client) ?? [], now, policy, units, force);
    if (step.verdict.allowed) {
      // Re-inserted: it moves to the back, the map stays ordered by latest spend.
      clients.delete(client);
      if (clients.size >= maxClients) clients.delete(clients.keys().next().value!);
      if (step.spends.length > 0) clients.set(client, step.spends);
    }
    return step.verdict;
  };
  return {
    take: async (client, units = 1) => spend(client, units, false),
    charge: async (client, units) => spend(client, units, true),
    async close() {
      clients.clear();
    },
  };
}
