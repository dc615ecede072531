import { describe, expect, it } from "vitest";
import { budgetHolder } from "./address";

describe("budgetHolder", () => {
  it("is an IPv4 address itself, also mapped into IPv6", () => {
    expect(budgetHolder("198.51.100.7")).toBe("198.51.100.7");
    expect(budgetHolder("::ffff:198.51.100.7")).toBe("198.51.100.7");
    expect(budgetHolder("::FFFF:198.51.100.7")).toBe("198.51.100.7");
  });

  it("is an IPv6 address's /64: every address of one network is one client", () => {
    const holder = "2001:db8:85a3:8d3::/64";
    for (const address of [
      "2001:db8:85a3:8d3:1319:8a2e:370:7348",
      "2001:0db8:85a3:08d3:0000:0000:0000:0001",
      "2001:DB8:85A3:8D3::",
      "2001:db8:85a3:8d3:ffff:ffff:ffff:ffff%eth0",
      "2001:db8:85a3:8d3::1.2.3.4",
    ])
      expect(budgetHolder(address), address).toBe(holder);
    expect(budgetHolder("2001:db8:85a3:8d4::1")).toBe("2001:db8:85a3:8d4::/64");
    expect(budgetHolder("::1")).toBe("0:0:0:0::/64");
    expect(budgetHolder("fe80::1")).toBe("fe80:0:0:0::/64");
  });

  it("is undefined for what is not an IP address (a forwarded header a client made up)", () => {
    for (const text of ["", "unknown", "example.com", "1.2.3", "2001:db8::g", "198.51.100.7, 10.0.0.1"])
      expect(budgetHolder(text), text).toBeUndefined();
  });
});
