/**
 * Before a load run: a sample of the run's requests, each answer compared with what the seeded data
 * implies. A run that would measure 404s, 503s or wrong answers is stopped here, loudly. A 503 with
 * Retry-After is asked again (devkit/ask): a server may still be recovering from the previous run's load.
 */
import { ask } from "../devkit/ask";
import { pool } from "../devkit/pool";
import type { Route } from "./routes";

/** Checks need this share of true or non-zero answers in the sample, or the run mostly measures misses. */
const MIN_POSITIVE = 0.2;
export type Verified = { answers: number; checks: number; positive: number };

/** Verifies a sample of the route's requests (see the module's head); throws if an answer is wrong. */
export async function verifyRoute(
  base: string,
  route: Route,
  sample: number,
  headers: Record<string, string>,
): Promise<Verified> {
  const step = Math.max(1, Math.floor(route.requests.length / sample));
  const picked = Array.from({ length: Math.min(sample, route.requests.length) }, (_, k) => k * step);
  const problems: string[] = [];
  await pool(picked, 8, async (i) => {
    const request = route.requests[i]!;
    const {
      status,
      text: body,
      headers: answered,
    } = await ask(base, request.path, {
      method: request.method,
      body: request.body,
      headers,
    });
    const why = route.wrong(i, status, body, answered);
    if (why !== undefined)
      problems.push(`${request.method} ${request.path}${request.body ? ` ${request.body.slice(0, 200)}` : ""}: ${why}`);
  });
  if (problems.length > 0) {
    throw new Error(
      `${route.label} at ${base}: ${problems.length} of ${picked.length} sampled answers are wrong; not measuring ` +
        `it:\n  ${problems.slice(0, 5).join("\n  ")}`,
    );
  }
  const positive = route.positive ? picked.filter((i) => route.positive!(i)).length : 0;
  // Over every request the run sends (the seeded data says which are hits), not the sample: a sample
  // of 20 drawn from a route of 30% hits holds 3 or fewer now and then, and the run would stop for it.
  const hits = route.positive ? route.requests.filter((_, i) => route.positive!(i)).length : 0;
  if (route.positive && hits < MIN_POSITIVE * route.requests.length) {
    throw new Error(
      `${route.label}: only ${hits} of ${route.requests.length} checks are true or non-zero; the run would ` +
        `measure misses`,
    );
  }
  return { answers: picked.length, checks: route.positive ? picked.length : 0, positive };
}
