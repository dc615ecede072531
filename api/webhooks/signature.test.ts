import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { newWebhookSecret, webhookHeaders, webhookSignature } from "./signature";

const now = () => Math.floor(Date.now() / 1000);

describe("webhook signatures, verified by the Standard Webhooks reference library (standardwebhooks)", () => {
  it("the standard's own example: its secret, id, timestamp and body give its signature", () => {
    const [secret, id, timestamp, body] = [
      "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
      "msg_p5jXN8AQM9LWM0D4loKWxJek",
      1614265330,
      '{"test": 2432232314}',
    ] as const;
    const signature = webhookSignature([secret], id, timestamp, body);
    expect(signature).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    expect(signature).toBe(new Webhook(secret).sign(id, new Date(timestamp * 1000), body));
  });

  it("a receiver holding the secret accepts the delivery and reads its body", () => {
    const secret = newWebhookSecret();
    const body = JSON.stringify({ entries: [{ seq: "1", chainId: 1 }] });
    const headers = webhookHeaders([secret], "msg_1", now(), body);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it("a changed body, id or timestamp, or another secret, is refused", () => {
    const secret = newWebhookSecret();
    const body = '{"entries":[]}';
    const headers = webhookHeaders([secret], "msg_2", now(), body);
    const receiver = new Webhook(secret);
    expect(() => receiver.verify('{"entries":[1]}', headers)).toThrow();
    expect(() => receiver.verify(body, { ...headers, "webhook-id": "msg_3" })).toThrow();
    expect(() => receiver.verify(body, { ...headers, "webhook-timestamp": String(now() - 1) })).toThrow();
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow();
  });

  it("while a secret is rotated both sign: a receiver holding either accepts", () => {
    const [old, rotated] = [newWebhookSecret(), newWebhookSecret()];
    const body = '{"entries":[]}';
    const headers = webhookHeaders([old, rotated], "msg_4", now(), body);
    expect(headers["webhook-signature"].split(" ")).toHaveLength(2);
    for (const secret of [old, rotated]) expect(new Webhook(secret).verify(body, headers)).toEqual({ entries: [] });
  });

  it("new secrets are whsec_ and 32 random bytes; malformed secrets are refused", () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(newWebhookSecret()).not.toBe(secret);
    expect(() => webhookSignature(["MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"], "m", 1, "")).toThrow(/whsec_/);
    expect(() => webhookSignature(["whsec_c2hvcnQ="], "m", 1, "")).toThrow(/24 to 64/);
    expect(() => webhookSignature([], "m", 1, "")).toThrow(/at least one/);
  });
});
