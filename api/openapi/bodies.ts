/**
 * The JSON Schemas of the request bodies: a batch of checks and a bulk listing (api/routes/batch.ts
 * reads them), built from the parameters each item or field takes (parameters.ts).
 */
import { MAX_BATCH_ITEMS, MAX_BULK_WALLETS } from "../limits";
import { PARAMETERS, type ParameterKey } from "./parameters";
import type { JsonSchema } from "./schemas";

/** A batch's body: the chain, the block, and the checks, each a GET check's parameters and its `type`. */
export function batchBody<K extends string>(
  kinds: readonly K[],
  parameters: Record<K, readonly ParameterKey[]>,
): JsonSchema {
  const names = [...new Set(kinds.flatMap((kind) => parameters[kind]))];
  const field = (key: ParameterKey) => ({
    description: PARAMETERS[key].description,
    anyOf: [PARAMETERS[key].schema, { type: "integer", minimum: 0 }],
  });
  return {
    type: "object",
    required: ["checks"],
    properties: {
      chainId: { description: PARAMETERS.chainId.description, anyOf: [{ type: "integer" }, { type: "string" }] },
      blockNumber: field("blockNumber"),
      timestamp: field("timestamp"),
      checks: {
        type: "array",
        minItems: 1,
        maxItems: MAX_BATCH_ITEMS,
        items: {
          type: "object",
          required: ["type"],
          properties: {
            type: { enum: [...kinds], description: "The check: the last segment of its GET path." },
            ...Object.fromEntries(names.map((name) => [PARAMETERS[name].name, field(name)])),
          },
        },
      },
    },
  };
}

/** A bulk listing's body: the chain, the block, the direction and the wallets. */
export const WALLETS_BODY: JsonSchema = {
  type: "object",
  required: ["wallets"],
  properties: {
    chainId: { description: PARAMETERS.chainId.description, anyOf: [{ type: "integer" }, { type: "string" }] },
    blockNumber: {
      description: PARAMETERS.blockNumber.description,
      anyOf: [PARAMETERS.blockNumber.schema, { type: "integer", minimum: 0 }],
    },
    timestamp: {
      description: PARAMETERS.timestamp.description,
      anyOf: [PARAMETERS.timestamp.schema, { type: "integer", minimum: 0 }],
    },
    direction: { description: PARAMETERS.direction.description, ...PARAMETERS.direction.schema },
    wallets: {
      type: "array",
      minItems: 1,
      maxItems: MAX_BULK_WALLETS,
      items: { ...PARAMETERS.wallet.schema, description: "A wallet whose listing is asked." },
    },
  },
};
