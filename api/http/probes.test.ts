import { describe, expect, it, vi } from "vitest";
import { backfilledReadiness, probes } from "./probes";

describe("probes", () => {
  it("/health answers 200; /ready says whether the process is ready, and why not", async () => {
    expect((await probes(async () => ({ ready: true, text: "" })).request("/health")).status).toBe(200);
    const waiting = await probes(async () => ({ ready: false, text: "not every chain is backfilled yet" })).request(
      "/ready",
    );
    expect([waiting.status, await waiting.text()]).toEqual([503, "not every chain is backfilled yet"]);
  });

  it("/ready echoes nothing of a database error (it may name hosts, users or schemas): the log has it", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const failing = probes(async () => {
      throw new Error('password authentication failed for user "delegations" at db.internal:5432');
    });
    const res = await failing.request("/ready");
    const text = await res.text();
    expect(res.status).toBe(503);
    expect(text).not.toMatch(/password|delegations|db\.internal/);
    expect(logged).toHaveBeenCalledWith(expect.stringContaining("db.internal"));
    logged.mockRestore();
  });

  it("backfilledReadiness: ready only when every chain served has a ready state", () => {
    const chains = [{ id: 1 }, { id: 10 }];
    const waiting = { ready: false, text: "not every chain is backfilled yet" };
    expect(backfilledReadiness(chains, new Map([[1, { ready: true }]]))).toEqual(waiting);
    expect(
      backfilledReadiness(
        chains,
        new Map([
          [1, { ready: true }],
          [10, { ready: false }],
        ]),
      ),
    ).toEqual(waiting);
    const both = new Map([
      [1, { ready: true }],
      [10, { ready: true }],
      [8453, { ready: false }],
    ]);
    expect(backfilledReadiness(chains, both)).toEqual({ ready: true, text: "" });
  });

  it("backfilledReadiness of chains indexed apart: ready once one is, naming the others", () => {
    const chains = [{ id: 1 }, { id: 10 }, { id: 8453 }];
    const one = new Map([
      [1, { ready: false }],
      [10, { ready: true }],
    ]);
    expect(backfilledReadiness(chains, one, true)).toEqual({
      ready: true,
      text: "chain 1 is syncing\nchain 8453 is syncing",
    });
    expect(backfilledReadiness(chains, new Map([[1, { ready: false }]]), true)).toEqual({
      ready: false,
      text: "not every chain is backfilled yet",
    });
  });
});
