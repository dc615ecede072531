import { createHmac, randomBytes } from "node:crypto";

/**
 * Webhook signatures as Standard Webhooks 1.0 makes them: the secret is `whsec_` and the base64 of
 * its key; a delivery carries `webhook-id`, `webhook-timestamp` (Unix seconds) and
 * `webhook-signature`, the space-separated `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` under
 * each secret in force. While a secret is rotated, the old and the new both sign, so a receiver
 * that knows either accepts the delivery.
 */

const PREFIX = "whsec_";
/** The key's bytes: the standard asks for 24 to 64. */
const KEY_BYTES = 32;

/** A new signing secret, shown to its owner once. */
export const newWebhookSecret = (): string => `${PREFIX}${randomBytes(KEY_BYTES).toString("base64")}`;

/** The HMAC key a secret names. */
function keyOf(secret: string): Buffer {
  if (!secret.startsWith(PREFIX)) throw new Error("a webhook secret begins with whsec_");
  const key = Buffer.from(secret.slice(PREFIX.length), "base64");
  if (key.length < 24 || key.length > 64) throw new Error("a webhook secret's key has 24 to 64 bytes");
  return key;
}

/** The `webhook-signature` header of `body` sent as message `id` at `timestamp` (Unix seconds), under each secret. */
export function webhookSignature(secrets: readonly string[], id: string, timestamp: number, body: string): string {
  if (secrets.length === 0) throw new Error("a delivery is signed under at least one secret");
  const signed = `${id}.${timestamp}.${body}`;
  return secrets.map((secret) => `v1,${createHmac("sha256", keyOf(secret)).update(signed).digest("base64")}`).join(" ");
}

/** The three headers of a delivery. */
export function webhookHeaders(
  secrets: readonly string[],
  id: string,
  timestamp: number,
  body: string,
): Record<"webhook-id" | "webhook-timestamp" | "webhook-signature", string> {
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": webhookSignature(secrets, id, timestamp, body),
  };
}
