import { FRESH_MS } from "../../api/access/valid-keys";

/**
 * Waits until every process's copy of the valid keys has been read since `changedAt` (a key's
 * revocation answered then): from then on, every process refuses it (docs/keys-and-limits.md: within 1 s).
 */
export async function untilFresh(changedAt: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, changedAt + FRESH_MS - Date.now())));
}
