/**
 * Before a load run: a sample of the run's requests, each answer compared with what the seeded data
 * implies. A run that would measure 404s, 503s or wrong answers is stopped here, loudly.
 */
import { pool } from "../test/helpers/common";
import type { Route } from "./routes";

/** Checks need this share of true or non-zero answers in the sample, or the run mostly measures misses. */
const MIN_POSITIVE = 0.2;
/** A 503 (with Retry-After) is asked again for this long: a server may still be recovering from the previous run's load. */
const RETRY_503_MS = 30_000;

async function ask(base: string, request: Route["requests"][number], headers: Record<string, string>) {
  const deadline = Date.now() + RETRY_503_MS;
  for (;;) {
    const res = await fetch(base + request.path, {
      method: request.method,
      body: request.body,
      headers,
      signal: AbortSignal.timeout(30_000),
    });
    const body = await res.text();
    if (res.status !== 503 || Date.now() > deadline) return { status: res.status, body };
    await new Promise((ok) => setTimeout(ok, 1000 * (Number(res.headers.get("retry-after")) || 1)));
  }
}

export type Verified = { answers: number; checks: number; positive: number };

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
    const { status, body } = await ask(base, request, headers);
    const why = route.wrong(i, status, body);
    if (why !== undefined)
      problems.push(`${request.method} ${request.path}${request.body ? ` ${request.body.slice(0, 200)}` : ""}: ${why}`);
  });
  if (problems.length > 0) {
    throw new Error(
      `${route.label} at ${base}: ${problems.length} of ${picked.length} sampled answers are wrong; not measuring it:\n  ${problems.slice(0, 5).join("\n  ")}`,
    );
  }
  const positive = route.positive ? picked.filter((i) => route.positive!(i)).length : 0;
  if (route.positive && positive < MIN_POSITIVE * picked.length) {
    throw new Error(
      `${route.label}: only ${positive} of ${picked.length} sampled checks are true or non-zero; the run would measure misses`,
    );
  }
  return { answers: picked.length, checks: route.positive ? picked.length : 0, positive };
}
