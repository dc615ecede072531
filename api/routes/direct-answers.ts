import type { IncomingMessage, RequestListener } from "node:http";
import type { Moment } from "../../core/moment";
import { parseAddress } from "../../core/parse";
import { UNBOUNDED } from "../access/middleware";
import { toJson } from "../http/json";
import { Params } from "../http/params";
import { requestText } from "../http/request-text";
import { MAX_BATCH_BYTES } from "../limits";
import { rpcChainId, rpcReplyBody, rpcReplyTo } from "../rpc/route";
import { answeredProblem, assembleParts, chainsAsked, type Part } from "./across";
import { jsonHeaders, servedChainId, trustedChain } from "./answer";
import { CORS } from "./cors";
import type { AppOptions } from "./env";
import type { ListingCache } from "./listing-cache";
import { blockInMemory } from "./moment";
import { type CheckReads, checkKind, directionOf, type RegistrySpec, wholeListing } from "./registry";
import { type AnswerName, honoPath, ROUTES, type Route, RouteMatcher } from "./table";
import { V1_SPEC } from "./v1";
import { V2_SPEC } from "./v2";

/**
 * A route the fast path answers: its answer to a request (its URL, its path parameters' values).
 * `held()` counts the key's use, false where the copy no longer vouches for it (the app's to
 * answer): an answer that reads the request's body calls it first, since the app could not read the
 * body after it; answerOf calls it for the others once their answer is certain.
 */
type FastAnswer = (
  options: Options,
  request: { req: IncomingMessage; url: string; held: () => boolean },
  values: string[],
) => Promise<Direct | undefined>;

/** A registry version's one check of the route's kind, from a request's parameters. */
const checkOf = <K extends string, Q>(
  spec: Pick<RegistrySpec<K, Q, unknown, unknown, unknown, unknown>, "version" | "kinds" | "readChecks" | "checkQuery">,
  route: Route,
): ((params: Params) => CheckReads) => {
  const kind = checkKind(spec, route);
  return (params) => spec.readChecks([spec.checkQuery(kind, params)]);
};
/** A registry version's whole listing (see wholeListing). */
type ListingOf = (...args: Tail<Parameters<typeof wholeListing>>) => ReturnType<typeof wholeListing>;
type Tail<T extends unknown[]> = T extends [unknown, ...infer R] ? R : never;
const LISTINGS: Record<"v1" | "v2", ListingOf> = {
  v1: (...args) => wholeListing(V1_SPEC, ...args),
  v2: (...args) => wholeListing(V2_SPEC, ...args),
};

type Options = Pick<AppOptions, "store" | "history" | "chains" | "alarms" | "access" | "moments"> & {
  listings: ListingCache;
};
/**
 * An answer given here: its route pattern (as the app's metrics name it), status, headers and body:
 * its text or its bytes, or for /rpc its bytes in pieces (api/rpc/route.ts, rpcReplyBody).
 */
type Direct<Body = string | Uint8Array | Uint8Array[]> = {
  route: string;
  status: number;
  headers: Record<string, string>;
  json: Body;
};

/** A 200 JSON answer at `block`, as the app's jsonAnswer. */
const atBlock = (route: string, json: string | Uint8Array, block: bigint): Direct<string | Uint8Array> => ({
  route,
  status: 200,
  headers: jsonHeaders(block),
  json,
});

/** The registry version a route reads (a fast route reads one). */
const versionOf = (route: Route) => {
  if (route.version === undefined) throw new Error(`${route.path}: the fast path answers registry routes only`);
  return route.version;
};

/** A GET route's answer on one chain, its request read already; undefined: the app's to answer. */
type ChainAnswer = (options: Options, chainId: number) => Promise<Direct<string | Uint8Array> | undefined>;
/** Reads a GET request, whatever chains it asks about (throws on what the app must refuse). */
type ReadRequest = (params: Params, values: string[]) => ChainAnswer | undefined;

/**
 * A check's answer: at the newest indexed block; at a past block (or a moment whose block memory
 * tells), from the store's copy where it can answer there, else from the history (a block the copy
 * holds, so indexed: as the app's answerAt).
 */
function checkRequest(route: Route): ReadRequest {
  const readsOf = route.version === "v1" ? checkOf(V1_SPEC, route) : checkOf(V2_SPEC, route);
  const label = honoPath(route.path);
  return (params) => {
    const at = params.at();
    const reads = readsOf(params);
    return async (options, chainId) => {
      // A moment memory tells is its block; any other moment's is the app's to find (api/routes/moment.ts).
      const asked = typeof at === "object" ? await momentBlock(options, chainId, at) : at;
      if (asked === null) return undefined;
      const view =
        asked === undefined
          ? await reads.head(options.store, chainId)
          : await reads.heldAt(options.store, chainId, asked);
      if (view === undefined || !view.ready) return undefined;
      let answers = view.data;
      // Not held, or untold (a row the check reads changed after the block): the history's.
      if (answers?.[0] === undefined) {
        if (asked === undefined || asked > view.indexedBlock || options.history === undefined) return undefined;
        answers = await reads.at(options.history, chainId, asked);
      }
      return atBlock(label, toJson(answers[0]), asked ?? view.indexedBlock);
    };
  };
}

/** The block of a moment, where memory tells it (null: the app's to find). */
async function momentBlock(options: Options, chainId: number, moment: Moment): Promise<bigint | null> {
  const position = (await options.store.chainStates()).get(chainId);
  if (position === undefined || !position.ready) return null;
  return blockInMemory(options, chainId, position, moment) ?? null;
}

/** A wallet's whole listing at the newest indexed block (not a page, nor at a past block). */
function listingRequest(route: Route): ReadRequest {
  const version = versionOf(route);
  const label = honoPath(route.path);
  return (params, [address]) => {
    if (["limit", "cursor", "blockNumber", "timestamp"].some((name) => params.get(name) !== undefined))
      return undefined;
    const wallet = parseAddress(address ?? "");
    const direction = directionOf(params);
    return async (options, chainId) => {
      const listing = await LISTINGS[version](options.store, options.listings, chainId, wallet, direction);
      if (listing === undefined || !listing.ready) return undefined;
      return atBlock(label, listing.json, listing.indexedBlock);
    };
  };
}

/**
 * A GET route's answer, on one chain or across the chains `chainId=all` or a list names
 * (api/routes/across.ts): each chain's part its answer on that chain alone, assembled as the app
 * assembles them; undefined (the app's to answer) unless every chain's part is given here. The
 * request is read once, whatever the chains.
 */
function getAnswer(route: Route, read: ReadRequest): FastAnswer {
  const version = versionOf(route);
  const label = honoPath(route.path);
  return async (options, { url }, values) => {
    let ids: number[];
    let answer: ChainAnswer | undefined;
    try {
      const params = Params.ofUrl(url);
      const served = options.chains.filter((chain) => chain[version] !== undefined).map((chain) => chain.id);
      const across = route.across ? chainsAsked(params.get("chainId"), served) : undefined;
      // The app's to refuse beside several chains.
      if (across !== undefined && (params.get("blockNumber") ?? params.get("cursor")) !== undefined) return undefined;
      ids = across?.map((id) => trustedChain(options, id)) ?? [servedChainId(options, version, params)];
      answer = read(params, values);
      if (answer === undefined) return undefined;
      if (across === undefined) return answer(options, ids[0]!);
    } catch {
      return undefined;
    }
    const parts: Part[] = [];
    for (const id of ids) {
      const part = await answer(options, id);
      if (part === undefined) return undefined;
      const json = typeof part.json === "string" ? encoder.encode(part.json) : part.json;
      parts.push({ chainId: id, block: BigInt(part.headers["X-Indexed-Block"]!), answer: json });
    }
    return { route: label, status: 200, headers: { "Content-Type": "application/json" }, json: assembleParts(parts) };
  };
}

const encoder = new TextEncoder();

/** What the app answers for an error thrown while answering (answeredProblem). */
async function errorAnswer(route: string, error: unknown): Promise<Direct> {
  const response = answeredProblem(error).response(CORS);
  return { route, status: response.status, headers: Object.fromEntries(response.headers), json: await response.text() };
}

/**
 * A JSON-RPC body (api/rpc/route.ts): of a chain served, with a Content-Length within a keyed
 * body's bound (else the app's to refuse, before any of it is read). Once the body is read, every
 * answer is given here, an error as the app gives it.
 */
function rpcAnswer(route: Route): FastAnswer {
  const label = honoPath(route.path);
  // The options with a keyed request's budget, made once per options rather than per request.
  const keyed = new WeakMap<Options, Options & { budget: typeof UNBOUNDED }>();
  return async (options, { req, held }, [chainParam]) => {
    let vars = keyed.get(options);
    if (vars === undefined) {
      vars = { ...options, budget: UNBOUNDED };
      keyed.set(options, vars);
    }
    let chainId: number;
    try {
      chainId = rpcChainId(vars, chainParam ?? "");
    } catch {
      return undefined;
    }
    const length = req.headers["content-length"];
    if (length === undefined || !/^\d+$/.test(length) || Number(length) > MAX_BATCH_BYTES || !held()) return undefined;
    try {
      const reply = await rpcReplyTo(vars, chainId, await requestText(req));
      // The type @hono/node-server gives the app's 204 (a response without one gets it).
      if (reply === undefined)
        return { route: label, status: 204, headers: { "Content-Type": "text/plain; charset=UTF-8" }, json: "" };
      return {
        route: label,
        status: 200,
        headers: { "Content-Type": "application/json" },
        json: rpcReplyBody(reply),
      };
    } catch (error) {
      return errorAnswer(label, error);
    }
  };
}

/** What the fast path can answer, by the answer a route names. */
const FAST_ANSWERS: Partial<Record<AnswerName, (route: Route) => FastAnswer>> = {
  check: (route) => getAnswer(route, checkRequest(route)),
  walletListing: (route) => getAnswer(route, listingRequest(route)),
  rpc: rpcAnswer,
};
/** The method each answer is asked with. */
const FAST_METHODS: Partial<Record<AnswerName, Route["method"]>> = { check: "get", walletListing: "get", rpc: "post" };
/** The routes the table marks fast, matched by their paths (an address as an address): compiled once. */
const FAST_ROUTES = ROUTES.filter((route) => route.fast);
const FAST_MATCHER = new RouteMatcher(FAST_ROUTES, true);
const FAST = new Map(
  FAST_ROUTES.map((route): [Route, FastAnswer] => {
    const answer = FAST_ANSWERS[route.answer];
    if (answer === undefined || route.method !== FAST_METHODS[route.answer]) {
      throw new Error(`${route.method.toUpperCase()} ${route.path} is marked fast, but the fast path cannot answer it`);
    }
    return [route, answer(route)];
  }),
);

/**
 * Wraps `app` (the API app's node:http listener) so that a keyed GET of a route the table marks fast
 * (api/routes/table.ts), with a key this process's copy vouches for, is answered here, on node:http:
 * a check, at the newest indexed block or at a past one (from the store's copy where it can tell,
 * api/replica/chain-state.ts, else from the history), and a wallet's whole listing at the newest
 * indexed block; on one chain, or across chains where every chain's part is one of these. They are
 * the app's very answers
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
    if (typeof key !== "string" || !options.access.keys.vouchesFor(key)) return undefined;
    const match = FAST_MATCHER.first(url);
    if (match === undefined || req.method !== match.route.method.toUpperCase()) return undefined;
    let used: boolean | undefined;
    const held = () => (used ??= options.access.keys.useHeld(key));
    const answer = await FAST.get(match.route)!(options, { req, url, held }, match.values);
    return answer !== undefined && held() ? answer : undefined;
  };
  return (req, res) => {
    answerOf(req).then(
      (answer) => {
        if (answer === undefined) return app(req, res);
        // A 204 has no body, nor a length (RFC 9110, 8.6).
        const pieces = Array.isArray(answer.json) ? answer.json : [answer.json];
        const bytes = pieces.reduce((sum, piece) => sum + Buffer.byteLength(piece), 0);
        const length = answer.status === 204 ? {} : { "Content-Length": String(bytes) };
        res.writeHead(answer.status, { ...CORS, ...answer.headers, ...length });
        for (const piece of pieces.slice(0, -1)) res.write(piece);
        res.end(pieces.at(-1));
        counted(answer.route, answer.status);
      },
      () => app(req, res),
    );
  };
}
