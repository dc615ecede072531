/**
 * What one request may ask for, in one place: the routes enforce these numbers and the OpenAPI
 * document states them (docs/api.md, "Batch checks", "Pages").
 */

/** The most checks one batch may hold. */
export const MAX_BATCH_ITEMS = 10_000;
/** The largest body a batch may have: 4 MiB. */
export const MAX_BATCH_BYTES = 4 * 1024 * 1024;
/** The most wallets one bulk listing may ask for. */
export const MAX_BULK_WALLETS = 1_000;
/** The most records one bulk listing may answer with, all wallets together. */
export const MAX_BULK_RECORDS = 100_000;
/** The page size of history and contract listings when no `limit` is given. */
export const LISTING_DEFAULT_LIMIT = 100;
/** The longest label a key may carry. */
export const MAX_LABEL = 100;

/** The rows a keyless client's unit of budget pays for: a read costs a unit per this many rows. */
export const KEYLESS_ROWS_PER_UNIT = 100;
/** The change feed's streams a client without a key may hold open at once, per process. */
export const KEYLESS_STREAMS = 2;
/** The webhook endpoints a key may have at once (the operator's are not counted): each costs deliveries. */
export const WEBHOOKS_PER_KEY = 20;
/**
 * The largest body a keyless client may send: more than 25 checks (its whole budget) can need,
 * each with every parameter at its longest. A larger one is refused before it is read.
 */
export const KEYLESS_MAX_BODY_BYTES = 32 * 1024;
