import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { type Execute, StoreBusy, waitingOutLocks } from "./store";

const lockTimeout = () =>
  new Error("query failed", {
    cause: Object.assign(new Error("canceling statement due to lock timeout"), { code: "55P03" }),
  });

/** An Execute failing with `failures` in turn, then answering; counts its calls. */
function flaky(failures: (() => Error)[]): Execute & { calls: number } {
  const execute = Object.assign(
    async () => {
      const failure = failures[execute.calls++];
      if (failure) throw failure();
      return { rows: [{ ok: 1 }] };
    },
    { calls: 0 },
  );
  return execute;
}

describe("waitingOutLocks", () => {
  it("takes a statement again after lock timeouts, however wrapped, until it is answered", async () => {
    const execute = flaky([lockTimeout, lockTimeout, lockTimeout]);
    await expect(waitingOutLocks(execute)(sql`SELECT 1`)).resolves.toEqual({ rows: [{ ok: 1 }] });
    expect(execute.calls).toBe(4);
  });

  it("gives up with StoreBusy (a 503) once the wait is over", async () => {
    const execute = flaky(Array.from({ length: 1_000_000 }, () => lockTimeout));
    await expect(waitingOutLocks(execute, 20)(sql`SELECT 1`)).rejects.toThrow(StoreBusy);
    expect(execute.calls).toBeGreaterThan(1);
  });

  it("passes any other error on at once", async () => {
    const execute = flaky([() => Object.assign(new Error('relation "nope" does not exist'), { code: "42P01" })]);
    await expect(waitingOutLocks(execute)(sql`SELECT 1`)).rejects.toThrow(/does not exist/);
    expect(execute.calls).toBe(1);
  });
});
