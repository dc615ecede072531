/**
 * Answers across chains (docs/api.md, "Every chain at once"): `chainId=all` or a list
 * (`1,8453,10`) on a GET route the table marks `across`. Each chain's part is the route's own
 * single-chain handler run for that chain alone (its request with `chainId=<id>`), so it is exactly
 * the answer one chain would give; the parts are assembled, by chain id, into `{"chains": [...]}`:
 * `{chainId, block, answer}` (with `next`, that chain's cursor, when a page has more), or
 * `{chainId, problem}` for a chain that cannot answer now. Bad input is the 400 one chain would give.
 */
import { Context } from "hono";
import { parseChainIds } from "../../core/parse";
import type { Budget } from "../access/middleware";
import { Params, parseParam, refuseUnserved } from "../http/params";
import { Problem, problemBody } from "../http/problem";
import { databaseUnavailable, databaseUnreachable } from "../http/unavailable";
import { StoreBusy } from "../store/store";
import type { Env } from "./env";
import type { Route, RouteHandler } from "./table";

/** What `chainId=all` and lists name in errors. */
const PARAM = "chainId";

/**
 * The chains a `chainId` asks about, by id; undefined where it names one chain (or none: the default),
 * which the route answers itself. `served`: the chains served for the route's version.
 */
export function chainsAsked(raw: string | undefined, served: readonly number[]): number[] | undefined {
  if (raw === undefined || (raw !== "all" && !raw.includes(","))) return undefined;
  const sorted = [...served].sort((a, b) => a - b);
  const asked = parseParam(PARAM, raw, parseChainIds);
  if (asked === "all") return sorted;
  refuseUnserved(asked, served);
  return asked.sort((a, b) => a - b);
}

/** One chain's part of the answer: its answer's JSON at a block (and its next page's cursor), or its problem. */
export type Part =
  | { chainId: number; block: bigint; answer: Uint8Array; next?: string }
  | { chainId: number; problem: Record<string, unknown> };

const encoder = new TextEncoder();

/** The answer across chains: `{"chains": [...]}`, each answer's JSON as the chain's route wrote it. */
export function assembleParts(parts: readonly Part[]): Uint8Array<ArrayBuffer> {
  const pieces: Uint8Array[] = [encoder.encode('{"chains":[')];
  parts.forEach((part, i) => {
    const head = `${i === 0 ? "" : ","}{"chainId":${part.chainId},`;
    if ("problem" in part) {
      pieces.push(encoder.encode(`${head}"problem":${JSON.stringify(part.problem)}}`));
      return;
    }
    pieces.push(encoder.encode(`${head}"block":${part.block},"answer":`), part.answer);
    pieces.push(encoder.encode(`${part.next === undefined ? "" : `,"next":${JSON.stringify(part.next)}`}}`));
  });
  pieces.push(encoder.encode("]}"));
  const out = new Uint8Array(pieces.reduce((sum, piece) => sum + piece.length, 0));
  let at = 0;
  for (const piece of pieces) {
    out.set(piece, at);
    at += piece.length;
  }
  return out;
}

/**
 * The problem an error answers with, as the app's error handler makes it (api/app.ts); undefined for
 * an error that is a bug (the app's 500).
 */
export function problemOf(error: unknown): Problem | undefined {
  if (error instanceof Problem) return error;
  if (error instanceof StoreBusy) {
    return new Problem("chain_syncing", `${error.message}; ask again in a moment`, {
      headers: { "Retry-After": "1" },
    });
  }
  // Not a bug, and not a reason to guess: the answer needs the database.
  if (databaseUnavailable(error)) return databaseUnreachable();
  return undefined;
}

/**
 * What the app answers for an error thrown while answering (its error handler, api/app.ts; the fast
 * path's too): its problem, or for a bug a 500 that says only that it is logged (and logs it).
 */
export function answeredProblem(error: unknown): Problem {
  const problem = problemOf(error);
  if (problem !== undefined) return problem;
  console.error(error);
  return new Problem("internal", "the service failed to answer; the error is logged");
}

/**
 * A chain's problem that is the whole request's: bad input (any chain would say the same), a path
 * that names nothing, or a keyless budget spent. The rest (a chain syncing, reorganized, its block
 * not indexed, its store failing) are that chain's part.
 */
const REQUEST_PROBLEMS = new Set([
  "missing_parameter",
  "invalid_parameter",
  "conflicting_parameter",
  "unsupported_chain",
  "not_found",
  "rate_limited",
]);

/** The next page's cursor that a page's Link header names, if any. */
export function nextCursor(link: string | null): string | undefined {
  const target = link === null ? undefined : /^<([^>]*)>/.exec(link)?.[1];
  if (target === undefined) return undefined;
  return new URLSearchParams(target.slice(target.indexOf("?") + 1)).get("cursor") ?? undefined;
}

/** The URL of the request for chain `id` alone: `chainId` given as `id`, every other pair as it was. */
export function chainUrl(url: string, id: number): string {
  const start = url.indexOf("?");
  const end = url.indexOf("#");
  const query = url.slice(start + 1, end === -1 ? undefined : end);
  const pairs = query.split("&").filter((pair) => pair !== "" && !/^chainId(=|$)/.test(pair));
  return `${url.slice(0, start)}?${[...pairs, `chainId=${id}`].join("&")}`;
}

/**
 * The keyless budgets of `count` chains' requests, spent together: what each spends before it reads
 * (a page, by its size) is held until every chain has spent or finished, then spent at once, all or
 * none. What they charge after reading goes to `budget` as it comes.
 */
export function sharedBudgets(budget: Budget, count: number): (Budget & { done: () => void })[] {
  let waiting = count;
  const held: { units: number; why?: string; settle: (error?: unknown) => void }[] = [];
  const release = () => {
    const units = held.reduce((sum, spend) => sum + spend.units, 0);
    const why = held.find((spend) => spend.why !== undefined)?.why;
    const each = held.splice(0);
    budget.spend(units, why && `${why}, on each of ${count} chains`).then(
      () => {
        for (const spend of each) spend.settle();
      },
      (error: unknown) => {
        for (const spend of each) spend.settle(error);
      },
    );
  };
  const arrived = () => {
    waiting -= 1;
    if (waiting === 0) release();
  };
  return Array.from({ length: count }, () => {
    let first = true;
    const done = () => {
      if (first) arrived();
      first = false;
    };
    return {
      spend: (units: number, why?: string) => {
        if (!first) return budget.spend(units, why);
        return new Promise<void>((resolve, reject) => {
          held.push({ units, why, settle: (error) => (error === undefined ? resolve() : reject(error)) });
          done();
        });
      },
      charge: (units: number) => budget.charge(units),
      rows: () => budget.rows(),
      tooMuch: (what: string, cap: number) => budget.tooMuch(what, cap),
      headers: () => budget.headers(),
      /** A chain that finishes without spending lets the others' spends go. */
      done,
    };
  });
}

/** Chain `id`'s request: `c`'s, for that chain alone, with its variables and `budget`. */
function chainContext(c: Context<Env>, id: number, budget: Budget): Context<Env> {
  // Path parameters as the app's router gives them: encoded, so that reading one decodes it once.
  const params = Object.entries(c.req.param() as Record<string, string>).map(([name, value]) => [
    name,
    encodeURIComponent(value),
  ]);
  const request = new Request(chainUrl(c.req.url, id), { headers: c.req.raw.headers });
  const sub = new Context<Env>(request, {
    env: c.env,
    path: c.req.path,
    matchResult: [[[[], Object.fromEntries(params)]]] as never,
  });
  for (const [name, value] of Object.entries(c.var)) sub.set(name as keyof Env["Variables"], value as never);
  sub.set("budget", budget);
  return sub;
}

/** Chain `id`'s part: its handler's answer, or the problem it answers with. */
async function partOf(handler: RouteHandler, sub: Context<Env>, id: number): Promise<Part> {
  let response: Response;
  try {
    response = await handler(sub);
  } catch (error) {
    const problem = problemOf(error);
    if (problem === undefined) console.error(error);
    if (problem !== undefined && REQUEST_PROBLEMS.has(problem.code)) throw problem;
    const { code, detail, extra } = problem ?? new Problem("internal", "the service failed to answer; it is logged");
    const { headers: _, ...fields } = extra;
    return { chainId: id, problem: problemBody(code, detail, fields) };
  }
  const answer = new Uint8Array(await response.arrayBuffer());
  if (response.status !== 200) return { chainId: id, problem: JSON.parse(new TextDecoder().decode(answer)) };
  const block = BigInt(response.headers.get("X-Indexed-Block")!);
  const next = nextCursor(response.headers.get("Link"));
  return { chainId: id, block, answer, ...(next === undefined ? {} : { next }) };
}

/**
 * `handler`, and across chains where `chainId` is `all` or a list: each chain's part by `handler`
 * for that chain alone. `blockNumber` (a block is no moment across chains: `timestamp` is, each
 * chain's part at its own block) and `cursor` (a cursor continues one chain: ask that chain with it)
 * are refused beside them.
 */
export function acrossChains(route: Route, handler: RouteHandler): RouteHandler {
  const version = route.version!;
  return async (c) => {
    const params = Params.ofUrl(c.req.url);
    const served = c.var.chains.filter((chain) => chain[version] !== undefined).map((chain) => chain.id);
    const ids = chainsAsked(params.get(PARAM), served);
    if (ids === undefined) return handler(c);
    if (params.get("blockNumber") !== undefined) {
      throw new Problem(
        "conflicting_parameter",
        "'blockNumber' cannot be given with more than one chain: a block number means something else on each",
        { param: "blockNumber" },
      );
    }
    if (params.get("cursor") !== undefined) {
      throw new Problem(
        "invalid_parameter",
        "'cursor' continues one chain: ask that chain alone (chainId=<its id>) with its entry's next cursor",
        { param: "cursor" },
      );
    }
    // A keyless client pays each chain as a request of its own (it has paid one on arrival), all or none.
    const { budget } = c.var;
    await budget.spend(ids.length - 1, `a request on each of ${ids.length} chains`);
    const keyless = budget.rows() !== undefined;
    const budgets = keyless ? sharedBudgets(budget, ids.length) : ids.map(() => ({ ...budget, done: () => {} }));
    const parts = await Promise.all(
      ids.map((id, i) => partOf(handler, chainContext(c, id, budgets[i]!), id).finally(() => budgets[i]!.done())),
    );
    return c.body(assembleParts(parts), 200, { "Content-Type": "application/json" });
  };
}
