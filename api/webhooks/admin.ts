import type { Context } from "hono";
import { parseSeq } from "../../core/parse";
import { FEED_FILTERS, feedFilterOf } from "../feed/filter";
import { toJson } from "../http/json";
import { Params, parseParam } from "../http/params";
import { Problem } from "../http/problem";
import { WEBHOOKS_PER_KEY } from "../limits";
import type { Env } from "../routes/env";
import type { Answers } from "../routes/table";
import { webhookUrlProblem } from "./destination";
import { postWebhook } from "./send";
import { webhookHeaders } from "./signature";
import type { Webhook, WebhookAdmin } from "./store";

/** A test delivery's body: no entries, and says it is a test. */
export const TEST_BODY = '{"entries":[],"test":true}';

/** The longest URL an endpoint may have. */
const MAX_URL = 2_048;

const json = (c: Context<Env>, body: unknown, status: 200 | 201 = 200) =>
  c.body(toJson(body), status, { "Content-Type": "application/json" });

/** The JSON body's fields (an object), or a 400 naming what is wrong. */
async function bodyOf(c: Context<Env>): Promise<Record<string, unknown>> {
  const body = await c.req.json().catch(() => undefined);
  if (body === null || typeof body !== "object" || Array.isArray(body))
    throw new Problem("invalid_body", "send a JSON object");
  return body as Record<string, unknown>;
}

/** A body's `url`, refused when it cannot receive webhooks from here. */
function urlOf(value: unknown, allowPrivate: boolean): string {
  if (typeof value !== "string" || value.length > MAX_URL || value.includes("\u0000"))
    throw new Problem("invalid_parameter", `'url' is an http(s) URL of at most ${MAX_URL} characters`, {
      param: "url",
    });
  const problem = webhookUrlProblem(value, allowPrivate);
  if (problem) throw new Problem("invalid_parameter", `'url' cannot receive webhooks: ${problem}`, { param: "url" });
  return value;
}

/** A body's `filter`: GET /registry/feed's parameters as a query string, each checked as the feed checks it. */
function filterOf(value: unknown, served: readonly number[]): string {
  if (value === undefined) return "";
  if (typeof value !== "string" || value.length > MAX_URL)
    throw new Problem("invalid_parameter", "'filter' is a query string, as GET /registry/feed takes its filters", {
      param: "filter",
    });
  const params = Params.ofUrl(`?${value.replace(/^\?/, "")}`);
  const allowed = new Set<string>(FEED_FILTERS);
  const other = params.entries().find(([name]) => !allowed.has(name));
  if (other)
    throw new Problem("invalid_parameter", `'filter' may hold ${[...allowed].join(", ")}; not ${other[0]}`, {
      param: "filter",
    });
  feedFilterOf(new Params(params.entries(), "filter"), served);
  return value.replace(/^\?/, "");
}

const missing = (id: string) => new Problem("not_found", `no webhook has the id ${JSON.stringify(id)}`);

/**
 * Whose endpoints a request manages: `undefined`, the operator's (every endpoint; those it makes
 * belong to no key); or a key's id, only that key's own.
 */
export type WebhookOwner = (c: Context<Env>) => string | undefined;

/** What answers the webhooks' routes (api/routes/table.ts), for the operator or a key (`ownerOf`). */
export function webhookAnswers(admin: WebhookAdmin, ownerOf: WebhookOwner = () => undefined): Answers {
  const { store } = admin;
  // Another key's endpoint is as good as absent: a 404 does not say it exists. An id holding NUL
  // (which Postgres's text cannot) is no endpoint's: a 404, not a failed query.
  const found = async (c: Context<Env>): Promise<Webhook> => {
    const id = c.req.param("id") ?? "";
    const owner = ownerOf(c);
    const hook = id.includes("\u0000") ? undefined : await store.get(id);
    if (!hook || (owner !== undefined && hook.owner !== owner)) throw missing(id);
    return hook;
  };
  const changed = (hook: Webhook | undefined, id: string) => {
    if (!hook) throw missing(id);
    return hook;
  };
  /** `change` of the endpoint the request names, once found to be the caller's (never before: see found). */
  const act =
    (change: (id: string, c: Context<Env>) => Promise<Webhook | undefined>) => () => async (c: Context<Env>) => {
      const { id } = await found(c);
      return json(c, changed(await change(id, c), id));
    };
  return {
    createWebhook: () => async (c) => {
      const body = await bodyOf(c);
      const url = urlOf(body.url, admin.allowPrivate);
      const filter = filterOf(body.filter, admin.served);
      const owner = ownerOf(c);
      if (owner !== undefined && (await store.list(owner)).length >= WEBHOOKS_PER_KEY)
        throw new Problem("limit_reached", `a key may have ${WEBHOOKS_PER_KEY} webhook endpoints: delete one first`);
      const log = admin.log();
      if (!log)
        throw new Problem("chain_syncing", "the change log is not open yet", { headers: { "Retry-After": "5" } });
      // From what is logged next, unless a cursor says where (0: the oldest entry kept).
      const cursor =
        body.cursor === undefined ? await log.newest() : parseParam("cursor", String(body.cursor), parseSeq);
      return json(c, await store.create({ owner: owner ?? null, url, filter, cursor }), 201);
    },
    listWebhooks: () => async (c) => json(c, await store.list(ownerOf(c))),
    getWebhook: () => async (c) => json(c, await found(c)),
    updateWebhook: act(async (id, c) => {
      const body = await bodyOf(c);
      const url = body.url === undefined ? undefined : urlOf(body.url, admin.allowPrivate);
      const filter = body.filter === undefined ? undefined : filterOf(body.filter, admin.served);
      return store.update(id, { url, filter });
    }),
    deleteWebhook: () => async (c) => {
      const hook = await found(c);
      await store.remove(hook.id);
      return json(c, hook);
    },
    rotateWebhook: act((id) => store.rotate(id)),
    pauseWebhook: act((id) => store.pause(id, true)),
    resumeWebhook: act((id) => store.pause(id, false)),
    replayWebhook: act(async (id, c) => {
      const body = await bodyOf(c);
      return store.replay(id, parseParam("cursor", String(body.cursor ?? ""), parseSeq));
    }),
    webhookDeliveries: () => async (c) => json(c, await store.deliveries((await found(c)).id)),
    testWebhook: () => async (c) => {
      const hook = await found(c);
      const secrets = await store.secrets(hook.id);
      const id = `msg_${hook.id}_test_${Date.now()}`;
      const body = TEST_BODY;
      const headers = webhookHeaders(secrets, id, Math.floor(Date.now() / 1000), body);
      const attempt = await postWebhook({
        url: hook.url,
        headers,
        body,
        timeoutMs: admin.timeoutMs,
        allowPrivate: admin.allowPrivate,
      });
      return json(c, { id, status: attempt.status ?? null, error: attempt.error ?? null, ms: attempt.ms });
    },
  };
}
