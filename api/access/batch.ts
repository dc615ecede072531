/**
 * Lookups of many keys in one query, each call answered by a lookup that started after the call
 * was made: an answer never predates its request (a row changed before the request is seen
 * changed), yet requests that arrive together share one query instead of taking one each.
 */
export function batchedLookup<K, V>(lookup: (keys: K[]) => Promise<Map<K, V>>): (key: K) => Promise<V | undefined> {
  type Waiter = { resolve(value: V | undefined): void; reject(error: unknown): void };
  let waiting = new Map<K, Waiter[]>();
  let running = false;

  async function drain(): Promise<void> {
    running = true;
    while (waiting.size > 0) {
      // Calls from now on wait for the next lookup: this one may have begun before them.
      const batch = waiting;
      waiting = new Map();
      try {
        const found = await lookup([...batch.keys()]);
        for (const [key, waiters] of batch) for (const w of waiters) w.resolve(found.get(key));
      } catch (error) {
        for (const waiters of batch.values()) for (const w of waiters) w.reject(error);
      }
    }
    running = false;
  }

  return (key) =>
    new Promise<V | undefined>((resolve, reject) => {
      const waiters = waiting.get(key);
      if (waiters) waiters.push({ resolve, reject });
      else waiting.set(key, [{ resolve, reject }]);
      if (!running) void drain();
    });
}
