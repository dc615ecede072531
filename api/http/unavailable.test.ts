import { describe, expect, it } from "vitest";
import { databaseUnavailable } from "./unavailable";

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe("databaseUnavailable", () => {
  it("recognizes a server that refuses, drops or is shutting down, however deeply wrapped", () => {
    expect(databaseUnavailable(withCode("connect ECONNREFUSED 127.0.0.1:5432", "ECONNREFUSED"))).toBe(true);
    expect(databaseUnavailable(withCode("terminating connection due to administrator command", "57P01"))).toBe(true);
    expect(databaseUnavailable(new Error("Connection terminated unexpectedly"))).toBe(true);
    expect(
      databaseUnavailable(
        new Error("query failed", { cause: new Error("wrapped", { cause: withCode("refused", "ECONNREFUSED") }) }),
      ),
    ).toBe(true);
    expect(
      databaseUnavailable(
        new AggregateError([withCode("connect ECONNREFUSED ::1:5432", "ECONNREFUSED")], "all failed"),
      ),
    ).toBe(true);
  });
  it("leaves bugs and bad SQL alone", () => {
    expect(databaseUnavailable(withCode('relation "nope" does not exist', "42P01"))).toBe(false);
    expect(databaseUnavailable(new TypeError("cannot read properties of undefined"))).toBe(false);
    expect(databaseUnavailable("not an error")).toBe(false);
  });
});
