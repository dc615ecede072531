/** The least a refusal waits before it goes. */
export const REFUSAL_DELAY_MS = 250;
/** The refusals a second one client is answered by one process, whatever its connections. */
export const REFUSALS_PER_SECOND = 5;

/**
 * When the refusals (429) of each client go: each at least REFUSAL_DELAY_MS after it came, and
 * each client's at most `perSecond` a second; the rest wait their turn. A refusal costs little but
 * not nothing (its answer, and for a body still coming, a connection closed and opened again: about
 * 2 ms of a core, bench/profile.ts "hostile"), so a client kept over its budget may cost only a
 * bounded number of them, however many connections it holds (at most MAX_CONNECTIONS_PER_CLIENT,
 * api/http/server.ts: its waits are bounded too). Waiting costs a timer.
 *
 * Memory is bounded: clients whose turn has passed are dropped from the front of a map kept in the
 * order each was last refused (one whose turn has passed may stay behind one still waiting, which
 * is harmless: a turn passed is no turn); past `maxClients`, the one refused longest ago is forgotten.
 */
export function refusalPace(perSecond = REFUSALS_PER_SECOND, maxClients = 100_000) {
  const gap = 1000 / perSecond;
  /** Each client's next turn (ms): when its next refusal may go, at the earliest. */
  const turns = new Map<string, number>();
  return {
    /** Resolves when the refusal of `client`'s request that comes now may go. */
    wait(client: string): Promise<void> {
      const now = Date.now();
      for (const [oldest, turn] of turns) {
        if (turn > now) break;
        turns.delete(oldest);
      }
      const at = Math.max(now + REFUSAL_DELAY_MS, turns.get(client) ?? 0);
      turns.delete(client);
      if (turns.size >= maxClients) turns.delete(turns.keys().next().value!);
      // Re-inserted: it moves to the back.
      turns.set(client, at + gap);
      return new Promise((ok) => setTimeout(ok, at - now));
    },
  };
}

export type RefusalPace = ReturnType<typeof refusalPace>;
