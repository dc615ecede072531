/**
 * JSON-RPC 2.0's envelope for `POST /rpc/{chainId}` (docs/contract.md): a body is one request or
 * a batch of them; each request is answered alone, by its `id`, with a `result` or an `error`;
 * notifications (no `id`) get no answer. What a call asks is api/rpc/ 's other modules' to answer;
 * this reads the body into calls and writes the answers back.
 */

/** A request's id: a string, a number or null (JSON-RPC 2.0); undefined for a notification. */
export type RpcId = string | number | null;

/** The standard error codes a node uses (JSON-RPC 2.0, and -32000 for a server's own). */
export const RPC_ERRORS = {
  parse: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  server: -32000,
} as const;

export type RpcError = { code: number; message: string; data?: unknown };

/** One call of a body: its method and params, or why it is no call (answered with that error). */
export type RpcCall = { id: RpcId | undefined; method: string; params: unknown[] } | { id: RpcId; invalid: RpcError };

/** What a body holds: its calls, and whether it was a batch (answered with an array) or one. */
export type RpcBody = { batch: boolean; calls: RpcCall[] } | { error: RpcError };

/** The most calls of one batch. */
export const MAX_RPC_CALLS = 1_000;

const isId = (value: unknown): value is RpcId =>
  value === null || typeof value === "string" || (typeof value === "number" && Number.isFinite(value));

/** One request object of a body, as a call. */
function callOf(value: unknown): RpcCall {
  const invalid = (id: RpcId, message: string): RpcCall => ({
    id,
    invalid: { code: RPC_ERRORS.invalidRequest, message },
  });
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return invalid(null, "invalid request: a JSON-RPC request is an object");
  const request = value as Record<string, unknown>;
  const id = "id" in request ? request.id : undefined;
  if (id !== undefined && !isId(id)) return invalid(null, "invalid request: id must be a string, a number or null");
  if (request.jsonrpc !== "2.0") return invalid(id ?? null, 'invalid request: jsonrpc must be "2.0"');
  if (typeof request.method !== "string") return invalid(id ?? null, "invalid request: method must be a string");
  const params = request.params ?? [];
  if (!Array.isArray(params)) {
    return {
      id: id ?? null,
      invalid: { code: RPC_ERRORS.invalidParams, message: "invalid params: params must be an array" },
    };
  }
  return { id, method: request.method, params };
}

/** The calls of a body's text. */
export function readRpcBody(text: string): RpcBody {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { error: { code: RPC_ERRORS.parse, message: "parse error: the body is not JSON" } };
  }
  if (!Array.isArray(value)) return { batch: false, calls: [callOf(value)] };
  if (value.length === 0)
    return { error: { code: RPC_ERRORS.invalidRequest, message: "invalid request: empty batch" } };
  if (value.length > MAX_RPC_CALLS) {
    return {
      error: { code: RPC_ERRORS.invalidRequest, message: `batch too large: at most ${MAX_RPC_CALLS} calls` },
    };
  }
  return { batch: true, calls: value.map(callOf) };
}

/** One answer: a result or an error, for the call's id. */
export type RpcAnswer = { jsonrpc: "2.0"; id: RpcId } & ({ result: unknown } | { error: RpcError });

/**
 * The body to send back: the answers of the calls that have an id, in their order (one object for
 * a body that was one request); undefined when every call was a notification (nothing is sent).
 */
export function rpcReply(body: RpcBody, answers: readonly (RpcAnswer | undefined)[]): unknown {
  if ("error" in body) return { jsonrpc: "2.0", id: null, error: body.error };
  const sent = answers.filter((answer): answer is RpcAnswer => answer !== undefined);
  if (!body.batch) return sent[0];
  return sent.length === 0 ? undefined : sent;
}

/** A call's answer: undefined for a notification that is a valid call (JSON-RPC answers none). */
export function answerOf(call: RpcCall, outcome: { result: unknown } | { error: RpcError }): RpcAnswer | undefined {
  if ("invalid" in call) return { jsonrpc: "2.0", id: call.id, error: call.invalid };
  if (call.id === undefined) return undefined;
  return { jsonrpc: "2.0", id: call.id, ...outcome };
}
