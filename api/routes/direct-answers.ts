import type { IncomingMessage, RequestListener } from "node:http";
import type { Address } from "viem";
import { parseAddress } from "../../core/parse";
import { toJson } from "../http/json";
import { Params } from "../http/params";
import { jsonHeaders, servedChainId } from "./answer";
import { CORS } from "./cors";
import type { AppOptions } from "./env";
import type { ListingCache } from "./listing-cache";
import { type CheckReads, directionOf, type RegistrySpec, wholeListing } from "./registry";
import { V1_SPEC } from "./v1";
import { V2_SPEC } from "./v2";

/** `/registry/<version>/check/<kind>`, with or without a query. */
const CHECK_PATH = /^\/registry\/(v[12])\/check\/([a-z0-9]+)(?:\?|$)/;
/** `/registry/<version>/<wallet>`, with or without a query. */
const WALLET_PATH = /^\/registry\/(v[12])\/(0x[0-9a-fA-F]{40})(?:\?|$)/;

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
/** A registry version's whole listing (see wholeListing). */
type ListingOf = (...args: Tail<Parameters<typeof wholeListing>>) => ReturnType<typeof wholeListing>;
type Tail<T extends unknown[]> = T extends [unknown, ...infer R] ? R : never;
const LISTINGS: Record<"v1" | "v2", ListingOf> = {
  v1: (...args) => wholeListing(V1_SPEC, ...args),
  v2: (...args) => wholeListing(V2_SPEC, ...args),
};

type Options = Pick<AppOptions, "store" | "history" | "chains" | "alarms" | "access"> & { listings: ListingCache };
/** An answer given here: its route pattern (as the app's metrics name it), its JSON and its block. */
type Direct = { route: string; json: string | Uint8Array; block: bigint };

/**
 * A check's answer: at the newest indexed block; at a past block, from the store's copy where it can
 * answer there, else from the history (a block the copy holds, so indexed: as the app's answerAt).
 */
async function checkAnswer(options: Options, url: string, match: RegExpExecArray): Promise<Direct | undefined> {
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
    asked === undefined ? await reads.head(options.store, chainId) : await reads.heldAt(options.store, chainId, asked);
  if (view === undefined || !view.ready) return undefined;
  let answers = view.data;
  if (answers === undefined) {
    if (asked === undefined || asked > view.indexedBlock || options.history === undefined) return undefined;
    answers = await reads.at(options.history, chainId, asked);
  }
  return { route: `/registry/${version}/check/${kind}`, json: toJson(answers[0]), block: asked ?? view.indexedBlock };
}

/** A wallet's whole listing at the newest indexed block (not a page, nor at a past block). */
async function listingAnswer(options: Options, url: string, match: RegExpExecArray): Promise<Direct | undefined> {
  const [, version, address] = match as unknown as [string, "v1" | "v2", string];
  let chainId: number;
  let wallet: Address;
  let direction: ReturnType<typeof directionOf>;
  try {
    const params = Params.ofUrl(url);
    if (["limit", "cursor", "blockNumber"].some((name) => params.get(name) !== undefined)) return undefined;
    chainId = servedChainId(options, version, params);
    wallet = parseAddress(address);
    direction = directionOf(params);
  } catch {
    return undefined;
  }
  const listing = await LISTINGS[version](options.store, options.listings, chainId, wallet, direction);
  if (listing === undefined || !listing.ready) return undefined;
  return { route: `/registry/${version}/:wallet`, json: listing.json, block: listing.indexedBlock };
}

/**
 * Wraps `app` (the API app's node:http listener) so that a keyed GET check, at the newest indexed
 * block or at a past one (from the store's copy where it can tell, api/replica/chain-state.ts,
 * else from the history), and a keyed GET of a wallet's whole listing at the newest indexed block, with a key this
 * process's copy vouches for, are answered here, on node:http: the app's very answers
 * (test/app/direct-answers.test.ts compares them), without Hono's routing and middleware and the
 * Request and Response objects, which took most of a check's time (docs/performance.md). Every
 * other request, and every one whose answer would not be a 200 (bad input, a chain syncing or
 * refused, a key the copy cannot vouch for, a store that fails), goes to `app`, having changed
 * nothing: a key the copy cannot vouch for costs no read here, and a key's use is counted only
 * once the answer is certain. `listings` are the app's own
 * (AppOptions). `counted` hears of each answer given here (by its route pattern and status), as the
 * app's metrics count the app's.
 */
export function withDirectAnswers(
  options: Options,
  app: RequestListener,
  counted: (route: string, status: number) => void = () => {},
): RequestListener {
  /** The answer, or undefined: the app's to answer. */
  const answerOf = async (req: IncomingMessage): Promise<Direct | undefined> => {
    const url = req.url ?? "";
    const key = req.headers["x-api-key"];
    // A key the copy cannot vouch for is the app's to refuse or look up, before any read here.
    if (req.method !== "GET" || typeof key !== "string" || !options.access.keys.vouchesFor(key)) return undefined;
    const check = CHECK_PATH.exec(url);
    const listing = check === null ? WALLET_PATH.exec(url) : null;
    const answer =
      check !== null
        ? await checkAnswer(options, url, check)
        : listing !== null
          ? await listingAnswer(options, url, listing)
          : undefined;
    return answer !== undefined && options.access.keys.useHeld(key) ? answer : undefined;
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
