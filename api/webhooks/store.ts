import { randomBytes } from "node:crypto";
import { table } from "../../core/sql";
import { type AccessDb, migrate } from "../database/db";
import type { ChangeLog } from "../feed/log";
import { newWebhookSecret } from "./signature";

/** How long the old secret still signs after a rotation: receivers have a day to take the new one. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;
/** The deliveries kept per endpoint, newest first, for its owner to see. */
const KEPT_DELIVERIES = 100;

/** An endpoint as its owner sees it: never its secret, which is shown once, when made or rotated. */
export type Webhook = {
  id: string;
  /** The key that owns it (GET /developer), or null: the operator's. */
  owner: string | null;
  url: string;
  /** Its filters as a query string (GET /registry/feed's: `chainId=1&wallet=0x…`). */
  filter: string;
  /** The seq of the last entry delivered, or skipped by its filters. */
  cursor: bigint;
  /** While a delivery is retried: the seq it reads through, so that every retry sends the same entries. */
  pending: bigint | null;
  paused: boolean;
  /** Why deliveries stopped for good (a 410, the retries exhausted), or null. */
  disabled: string | null;
  /** Failed attempts of the delivery now due. */
  attempt: number;
  nextAt: Date;
  createdAt: Date;
};

/** What the deliverer needs of an endpoint beside: the secrets that sign now. */
export type DueWebhook = Webhook & { secrets: string[] };

/** One attempt as kept for the owner. */
export type DeliveryRecord = {
  id: string;
  webhookId: string;
  firstSeq: bigint;
  lastSeq: bigint;
  entries: number;
  attempt: number;
  status: number | null;
  error: string | null;
  ms: number;
  at: Date;
};

const COLUMNS = "id, owner, url, filter, cursor::text, pending::text, paused, disabled, attempt, next_at, created_at";

/** The secrets in force: the new one, and the old one while its overlap lasts. */
const SECRETS = "secret, CASE WHEN old_until > now() THEN old_secret END AS old_secret";
const secretsOf = (r: Record<string, unknown>) => [
  r.secret as string,
  ...(r.old_secret ? [r.old_secret as string] : []),
];

const webhookOf = (r: Record<string, unknown>): Webhook => ({
  id: r.id as string,
  owner: (r.owner as string | null) ?? null,
  url: r.url as string,
  filter: r.filter as string,
  cursor: BigInt(r.cursor as string),
  pending: r.pending === null ? null : BigInt(r.pending as string),
  paused: r.paused as boolean,
  disabled: (r.disabled as string | null) ?? null,
  attempt: Number(r.attempt),
  nextAt: new Date(r.next_at as string),
  createdAt: new Date(r.created_at as string),
});

const deliveryOf = (r: Record<string, unknown>): DeliveryRecord => ({
  id: r.id as string,
  webhookId: r.webhook_id as string,
  firstSeq: BigInt(r.first_seq as string),
  lastSeq: BigInt(r.last_seq as string),
  entries: Number(r.entries),
  attempt: Number(r.attempt),
  status: r.status === null ? null : Number(r.status),
  error: (r.error as string | null) ?? null,
  ms: Number(r.ms),
  at: new Date(r.at as string),
});

/**
 * The webhook endpoints and their recent deliveries, beside the keys. An endpoint's cursor moves
 * only when a delivery was taken (2xx): delivery state lives in the database, so a restart or
 * another deliverer carries on from it (at least once: a delivery taken just before a crash is sent
 * again, with the same `webhook-id`).
 */
export async function openWebhookStore(db: AccessDb, schema: string) {
  const hooks = table(schema, "webhook");
  const deliveries = table(schema, "webhook_delivery");
  const lease = table(schema, "webhook_lease");
  await migrate(db, schema, [
    `CREATE TABLE IF NOT EXISTS ${hooks} (
      id text PRIMARY KEY,
      owner text,
      url text NOT NULL,
      filter text NOT NULL,
      secret text NOT NULL,
      old_secret text,
      old_until timestamptz,
      cursor bigint NOT NULL,
      pending bigint,
      paused boolean NOT NULL DEFAULT false,
      disabled text,
      attempt integer NOT NULL DEFAULT 0,
      next_at timestamptz NOT NULL DEFAULT now(),
      created_at timestamptz NOT NULL DEFAULT now()
    )`,
    `CREATE TABLE IF NOT EXISTS ${deliveries} (
      id text NOT NULL,
      webhook_id text NOT NULL,
      first_seq bigint NOT NULL,
      last_seq bigint NOT NULL,
      entries integer NOT NULL,
      attempt integer NOT NULL,
      status integer,
      error text,
      ms integer NOT NULL,
      at timestamptz NOT NULL DEFAULT clock_timestamp()
    )`,
    `CREATE INDEX IF NOT EXISTS webhook_delivery_recent ON ${deliveries} (webhook_id, at DESC)`,
    `CREATE TABLE IF NOT EXISTS ${lease} (one boolean PRIMARY KEY DEFAULT true CHECK (one), holder text NOT NULL,
      until timestamptz NOT NULL)`,
  ]);
  const one = async (sql: string, params: unknown[]) => {
    const { rows } = await db.query(`${sql} RETURNING ${COLUMNS}`, params);
    return rows[0] ? webhookOf(rows[0]) : undefined;
  };

  return {
    /** A new endpoint, delivering what is logged after `cursor`; its secret is in the answer only. */
    async create(input: { owner: string | null; url: string; filter: string; cursor: bigint }) {
      const secret = newWebhookSecret();
      const id = `wh_${randomBytes(8).toString("hex")}`;
      const made = await one(
        `INSERT INTO ${hooks} (id, owner, url, filter, secret, cursor) VALUES ($1, $2, $3, $4, $5, $6)`,
        [id, input.owner, input.url, input.filter, secret, input.cursor.toString()],
      );
      return { ...made!, secret };
    },

    /** The endpoints of `owner` (undefined: every one), oldest first. */
    async list(owner?: string | null): Promise<Webhook[]> {
      const { rows } =
        owner === undefined
          ? await db.query(`SELECT ${COLUMNS} FROM ${hooks} ORDER BY created_at, id`)
          : await db.query(
              `SELECT ${COLUMNS} FROM ${hooks} WHERE owner IS NOT DISTINCT FROM $1 ORDER BY created_at, id`,
              [owner],
            );
      return rows.map(webhookOf);
    },

    async get(id: string): Promise<Webhook | undefined> {
      const { rows } = await db.query(`SELECT ${COLUMNS} FROM ${hooks} WHERE id = $1`, [id]);
      return rows[0] ? webhookOf(rows[0]) : undefined;
    },

    /** Changes its URL or filters; a disabled endpoint changed is enabled again, its attempts forgotten. */
    update: (id: string, change: { url?: string; filter?: string }) =>
      one(
        `UPDATE ${hooks} SET url = coalesce($2, url), filter = coalesce($3, filter), disabled = NULL, attempt = 0,
           pending = NULL, next_at = now() WHERE id = $1`,
        [id, change.url ?? null, change.filter ?? null],
      ),

    /** Pauses it (deliveries wait, entries are kept for it) or resumes it. */
    pause: (id: string, paused: boolean) =>
      one(`UPDATE ${hooks} SET paused = $2, next_at = now() WHERE id = $1`, [id, paused]),

    /** A new secret; the old one still signs for ROTATION_OVERLAP_MS. */
    async rotate(id: string) {
      const secret = newWebhookSecret();
      const rotated = await one(
        `UPDATE ${hooks} SET old_secret = secret, old_until = now() + make_interval(secs => $3), secret = $2
         WHERE id = $1`,
        [id, secret, ROTATION_OVERLAP_MS / 1000],
      );
      return rotated && { ...rotated, secret };
    },

    /** Delivers again from after `cursor` (a replay), enabled again. */
    replay: (id: string, cursor: bigint) =>
      one(
        `UPDATE ${hooks} SET cursor = $2, pending = NULL, disabled = NULL, attempt = 0, next_at = now() WHERE id = $1`,
        [id, cursor.toString()],
      ),

    async remove(id: string): Promise<boolean> {
      const { rows } = await db.query(`DELETE FROM ${hooks} WHERE id = $1 RETURNING id`, [id]);
      await db.query(`DELETE FROM ${deliveries} WHERE webhook_id = $1`, [id]);
      return rows.length > 0;
    },

    ...deliveryState(db, { hooks, deliveries, lease }),
  };
}

/** What the deliverer reads and writes: endpoints due, the outcome of each attempt, and its lease. */
function deliveryState(db: AccessDb, tables: { hooks: string; deliveries: string; lease: string }) {
  const { hooks, deliveries, lease } = tables;
  return {
    /** The endpoints due a delivery now, with the secrets that sign. */
    async due(): Promise<DueWebhook[]> {
      const { rows } = await db.query(
        `SELECT ${COLUMNS}, ${SECRETS} FROM ${hooks}
         WHERE NOT paused AND disabled IS NULL AND next_at <= now() ORDER BY next_at, id`,
      );
      return rows.map((r) => ({ ...webhookOf(r), secrets: secretsOf(r) }));
    },

    /** The secrets that sign an endpoint's deliveries now (none: no such endpoint). */
    async secrets(id: string): Promise<string[]> {
      const { rows } = await db.query(`SELECT ${SECRETS} FROM ${hooks} WHERE id = $1`, [id]);
      return rows[0] ? secretsOf(rows[0]) : [];
    },

    /**
     * Records an attempt and what follows it: `cursor` moved (taken, or nothing to send), a retry at
     * `retryAt` of the entries through `pending`, or the endpoint disabled (`disabled`). Only while
     * the endpoint's cursor is still the one read: an endpoint replayed meanwhile keeps its own.
     * Whether the deliverer may go on with the next batch (false: changed or paused meanwhile).
     */
    async settle(
      hook: Pick<Webhook, "id" | "cursor">,
      outcome: {
        cursor?: bigint;
        retryAt?: Date;
        pending?: bigint;
        disabled?: string;
        delivery?: Omit<DeliveryRecord, "at">;
      },
    ): Promise<boolean> {
      return db.transaction(async (query) => {
        const { rows } = await query(
          `UPDATE ${hooks} SET cursor = $3, attempt = CASE WHEN $4::timestamptz IS NULL THEN 0 ELSE attempt + 1 END,
             next_at = coalesce($4::timestamptz, now()), disabled = $5, pending = $6
           WHERE id = $1 AND cursor = $2 RETURNING paused`,
          [
            hook.id,
            hook.cursor.toString(),
            (outcome.cursor ?? hook.cursor).toString(),
            outcome.retryAt?.toISOString() ?? null,
            outcome.disabled ?? null,
            outcome.pending?.toString() ?? null,
          ],
        );
        const d = outcome.delivery;
        // Whether to go on: the endpoint is as it was read, and not paused meanwhile.
        const goOn = rows.length > 0 && rows[0]!.paused === false;
        if (rows.length === 0 || !d) return goOn;
        await query(
          `INSERT INTO ${deliveries} (id, webhook_id, first_seq, last_seq, entries, attempt, status, error, ms)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
          [
            d.id,
            d.webhookId,
            d.firstSeq.toString(),
            d.lastSeq.toString(),
            d.entries,
            d.attempt,
            d.status,
            d.error,
            d.ms,
          ],
        );
        await query(
          `DELETE FROM ${deliveries} WHERE webhook_id = $1 AND at < (SELECT min(at) FROM (SELECT at FROM ${deliveries}
             WHERE webhook_id = $1 ORDER BY at DESC LIMIT ${KEPT_DELIVERIES}) kept)`,
          [d.webhookId],
        );
        return goOn;
      });
    },

    /**
     * Pins the entries a delivery's first attempt reads through, before it is sent: a deliverer that
     * takes over after a crash then sends the same entries under the same id.
     */
    async pin(hook: Pick<Webhook, "id" | "cursor">, through: bigint): Promise<boolean> {
      const { rows } = await db.query(
        `UPDATE ${hooks} SET pending = $3 WHERE id = $1 AND cursor = $2 AND NOT paused RETURNING id`,
        [hook.id, hook.cursor.toString(), through.toString()],
      );
      return rows.length > 0;
    },

    /** Its recent attempts, newest first. */
    async deliveries(id: string): Promise<DeliveryRecord[]> {
      const { rows } = await db.query(
        `SELECT id, webhook_id, first_seq::text, last_seq::text, entries, attempt, status, error, ms, at
         FROM ${deliveries} WHERE webhook_id = $1 ORDER BY at DESC LIMIT ${KEPT_DELIVERIES}`,
        [id],
      );
      return rows.map(deliveryOf);
    },

    /**
     * Takes or keeps the deliverers' lease for `holder` until `ms` from now: one deliverer at a time
     * in a deployment, even when two start. False: another holds it.
     */
    async lease(holder: string, ms: number): Promise<boolean> {
      const { rows } = await db.query(
        `INSERT INTO ${lease} (holder, until) VALUES ($1, now() + make_interval(secs => $2))
         ON CONFLICT (one) DO UPDATE SET holder = excluded.holder, until = excluded.until
         WHERE ${lease}.holder = excluded.holder OR ${lease}.until < now() RETURNING holder`,
        [holder, ms / 1000],
      );
      return rows.length > 0;
    },

    /** Gives the lease up, when `holder` has it: another deliverer need not wait for it to lapse. */
    async unlease(holder: string): Promise<void> {
      await db.query(`DELETE FROM ${lease} WHERE holder = $1`, [holder]);
    },
  };
}

export type WebhookStore = Awaited<ReturnType<typeof openWebhookStore>>;

/** What the admin endpoints of webhooks work over. */
export type WebhookAdmin = {
  store: WebhookStore;
  log: () => ChangeLog | undefined;
  /** The chains served: a filter may name only those. */
  served: readonly number[];
  /** WEBHOOK_ALLOW_PRIVATE: URLs to private and loopback addresses are accepted. */
  allowPrivate: boolean;
  /** How long a test delivery waits for its answer. */
  timeoutMs: number;
};
