import { describe, expect, it } from "vitest";
import { budgetHolder } from "./address";

describe("budgetHolder", () => {
  it("is an IPv4 address itself, also mapped into IPv6", () => {
    expect(budgetHolder("198.51.100.7")).toBe("198.51.100.7");
    expect(budgetHolder("::ffff:198.51.100.7")).toBe("198.51.100.7");
    expect(budgetHolder("::FFFF:198.51.100.7")).toBe("198.51.100.7");
  });

  it("is the IPv4 address however its mapping into IPv6 is spelled, zone or not", () => {
    for (const address of [
      "::ffff:c633:6407",
      "::FFFF:C633:6407",
      "0:0:0:0:0:ffff:198.51.100.7",
      "0000:0000:0000:0000:0000:ffff:c633:6407",
      "::0:ffff:198.51.100.7",
      "::ffff:198.51.100.7%eth0",
    ])
      expect(budgetHolder(address), address).toBe("198.51.100.7");
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

  it("is one /64 however its addresses are spelled: case, compression, leading zeros, zones", () => {
    for (const address of [
      "2001:DB8:85A3:8D3:1319:8A2E:370:7348",
      "2001:db8:85a3:8d3:0:0:0:0",
      "2001:db8:85a3:8d3:0::0",
      "2001:db8:85a3:08d3::0001",
      "2001:db8:85a3:8d3::ffff:198.51.100.7",
      "2001:db8:85a3:8d3::1%eth0.100",
      "2001:db8:85a3:8d3::1%25",
      "2001:db8:85a3:8d3::1%br-1f2e",
    ])
      expect(budgetHolder(address), address).toBe("2001:db8:85a3:8d3::/64");
    expect(budgetHolder("2001:db8:85a3::")).toBe("2001:db8:85a3:0::/64");
    expect(budgetHolder("::")).toBe("0:0:0:0::/64");
    expect(budgetHolder("::2:3:4:5:6:7:8")).toBe("0:2:3:4::/64");
    expect(budgetHolder("1:2:3:4:5:6:7::")).toBe("1:2:3:4::/64");
  });

  it("is undefined for what is not an IP address (a forwarded header a client made up)", () => {
    for (const text of ["", "unknown", "example.com", "1.2.3", "2001:db8::g", "198.51.100.7, 10.0.0.1"])
      expect(budgetHolder(text), text).toBeUndefined();
  });

  it("is undefined for other spellings of IPv4 addresses, malformed IPv6 and stray text", () => {
    for (const text of [
      // inet_aton's spellings: each would be another budget for one address.
      "127.1",
      "3325256711",
      "0xc6.51.100.7",
      "0306.51.100.7",
      "198.051.100.7",
      "198.51.100.256",
      "::ffff:0xc6.51.100.7",
      "::ffff:198.051.100.7",
      "::ffff:198.51.100",
      // Malformed IPv6.
      ":::",
      "1::2::3",
      "1:2:3:4:5:6:7:8:9",
      "1:2:3:4:5:6:7:1.2.3.4",
      "12345::",
      "[2001:db8::1]",
      "2001:db8::/64",
      "198.51.100.7/32",
      // Zones: only IPv6 has them, and a zone has a name.
      "198.51.100.7%eth0",
      "fe80::1%",
      "%eth0",
      // Stray text around an address.
      " 198.51.100.7",
      "198.51.100.7 ",
      "198.51.100.7\n",
      "2001:db8::1 ",
      "for=198.51.100.7",
    ])
      expect(budgetHolder(text), JSON.stringify(text)).toBeUndefined();
  });
});
