import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { guardedLookup, webhookUrlProblem } from "./destination";

/**
 * After each failed attempt, how long until the next: Standard Webhooks' schedule (5 s, 5 min,
 * 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h). Past its end, the endpoint is disabled.
 */
export const RETRY_SCHEDULE_MS = [5, 300, 1_800, 7_200, 18_000, 36_000, 50_400, 72_000, 86_400].map((s) => s * 1000);

/** How long to wait after failed attempt number `attempt` (1: the first), or undefined: give up. */
export const retryAfter = (attempt: number): number | undefined => RETRY_SCHEDULE_MS[attempt - 1];

/** What an attempt came to: the endpoint's status, or why there was none; and how long it took. */
export type Attempt = { status?: number; error?: string; ms: number };

/** How much of an endpoint's answer is read: it says only whether it took the delivery. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * POSTs `body` to `url` once: no redirect followed (a 3xx is a failure), at most `timeoutMs` for
 * the whole exchange, the answer read up to MAX_ANSWER_BYTES and dropped. The URL is checked again
 * (its host may be an IP literal, which Node does not resolve) and every address its name resolves
 * to, unless `allowPrivate`.
 */
export function postWebhook(options: {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  allowPrivate: boolean;
}): Promise<Attempt> {
  const started = performance.now();
  const done = (outcome: Omit<Attempt, "ms">): Attempt => ({ ...outcome, ms: Math.round(performance.now() - started) });
  const refused = webhookUrlProblem(options.url, options.allowPrivate);
  if (refused) return Promise.resolve(done({ error: `refused: ${refused}` }));
  const url = new URL(options.url);
  const request = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome: Omit<Attempt, "ms">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve(done(outcome));
    };
    const req = request(
      url,
      {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "Content-Length": String(Buffer.byteLength(options.body)),
          "User-Agent": "delegation-registry-lookup webhooks",
          ...options.headers,
        },
        lookup: guardedLookup(options.allowPrivate),
        // A connection per delivery: an endpoint's socket is not kept between them.
        agent: false,
      },
      (res) => {
        let read = 0;
        res.on("data", (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_ANSWER_BYTES) settle({ status: res.statusCode });
        });
        res.on("end", () => settle({ status: res.statusCode }));
        res.on("error", () => settle({ status: res.statusCode }));
      },
    );
    const timer = setTimeout(() => settle({ error: `no answer in ${options.timeoutMs} ms` }), options.timeoutMs);
    req.on("error", (error) => settle({ error: error.message }));
    req.end(options.body);
  });
}

/** Whether an attempt delivered: a 2xx answer. */
export const delivered = (attempt: Attempt): boolean =>
  attempt.status !== undefined && attempt.status >= 200 && attempt.status < 300;
