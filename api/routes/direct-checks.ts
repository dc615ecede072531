import type { IncomingMessage, RequestListener } from "node:http";
import { toJson } from "../http/json";
import { Params } from "../http/params";
import { jsonHeaders, servedChainId } from "./answer";
import { CORS } from "./cors";
import type { AppOptions } from "./env";
import type { CheckReads, RegistrySpec } from "./registry";
import { V1_SPEC } from "./v1";
import { V2_SPEC } from "./v2";

/** `/registry/<version>/check/<kind>`, with or without a query. */
const CHECK_PATH = /^\/registry\/(v[12])\/check\/([a-z0-9]+)(?:\?|$)/;

/** A registry version's one check of `kind` from `params` (undefined: no such kind); throws as the route would. */
const checkOf =
  <K extends string, Q>(
    spec: Pick<RegistrySpec<K, Q, unknown, unknown, unknown, unknown>, "kinds" | "readChecks" | "checkQuery">,
  ) =>
  (kind: string, params: Params): CheckReads | undefined =>
    (spec.kinds as readonly string[]).includes(kind)
      ? spec.readChecks([spec.checkQuery(kind as K, params)])
      : undefined;
const CHECKS = { v1: checkOf(V1_SPEC), v2: checkOf(V2_SPEC) };

/**
 * Wraps `app` (the API app's node:http listener) so that a GET check at the newest indexed block,
 * or at a block the store's copy can answer at (api/replica/chain-state.ts, v2EnabledAt), with a
 * key this process's copy vouches for, is answered here, on node:http: the app's very answer
 * (test/direct-checks.test.ts compares them), without Hono's routing and middleware and the Request and
 * Response objects, which took most of a check's time (docs/performance.md). Every other request,
 * and every check whose answer would not be a 200 (bad input, a chain syncing or refused, a key the
 * copy cannot vouch for, a store that fails), goes to `app`, having changed nothing: the key's use
 * is counted only once the answer is certain. `counted` hears of each answer given here (by its route
 * pattern and status), as the app's metrics count the app's.
 */
export function withDirectChecks(
  options: Pick<AppOptions, "store" | "chains" | "alarms" | "access">,
  app: RequestListener,
  counted: (route: string, status: number) => void = () => {},
): RequestListener {
  /** The check's answer, or undefined: the app's to answer. */
  const answerOf = async (
    req: IncomingMessage,
  ): Promise<{ route: string; json: string; block: bigint } | undefined> => {
    const url = req.url ?? "";
    const match = CHECK_PATH.exec(url);
    const key = req.headers["x-api-key"];
    if (req.method !== "GET" || typeof key !== "string" || match === null) return undefined;
    const [, version, kind] = match as unknown as [string, "v1" | "v2", string];
    let chainId: number;
    let reads: CheckReads | undefined;
    let asked: bigint | undefined;
    try {
      const params = Params.ofUrl(url);
      asked = params.blockNumber();
      chainId = servedChainId(options, version, params);
      reads = CHECKS[version](kind, params);
    } catch {
      return undefined;
    }
    if (reads === undefined) return undefined;
    const view =
      asked === undefined
        ? await reads.head(options.store, chainId)
        : await reads.heldAt(options.store, chainId, asked);
    if (view === undefined || !view.ready || view.data === undefined) return undefined;
    const json = toJson(view.data[0]);
    if (!options.access.keys.useHeld(key)) return undefined;
    return { route: `/registry/${version}/check/${kind}`, json, block: asked ?? view.indexedBlock };
  };
  return (req, res) => {
    answerOf(req).then(
      (answer) => {
        if (answer === undefined) return app(req, res);
        const length = String(Buffer.byteLength(answer.json));
        res.writeHead(200, { ...CORS, ...jsonHeaders(answer.block), "Content-Length": length }).end(answer.json);
        counted(answer.route, 200);
      },
      () => app(req, res),
    );
  };
}
