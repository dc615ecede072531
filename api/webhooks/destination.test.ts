import { createServer, get, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { guardedLookup, specialRange, webhookUrlProblem } from "./destination";

describe("specialRange", () => {
  it("is undefined for public unicast addresses, IPv4 and IPv6", () => {
    for (const address of ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "2a00:1450:4001:82b::200e"])
      expect(specialRange(address), address).toBeUndefined();
  });

  it("names the range of loopback, private, link-local (cloud metadata), CGNAT and the rest", () => {
    const cases: [string, string][] = [
      ["127.0.0.1", "loopback"],
      ["127.255.0.9", "loopback"],
      ["::1", "loopback"],
      ["10.1.2.3", "private"],
      ["172.16.0.1", "private"],
      ["192.168.1.1", "private"],
      ["169.254.169.254", "linkLocal"],
      ["fe80::1", "linkLocal"],
      ["fe80::1%eth0", "linkLocal"],
      ["fd00:ec2::254", "uniqueLocal"],
      ["100.64.0.1", "carrierGradeNat"],
      ["0.0.0.0", "unspecified"],
      ["::", "unspecified"],
      ["224.0.0.1", "multicast"],
      ["255.255.255.255", "broadcast"],
      ["64:ff9b::a00:1", "rfc6052"],
      ["2002:a00:1::", "6to4"],
    ];
    for (const [address, range] of cases) expect(specialRange(address), address).toBe(range);
  });

  it("judges an IPv4 address mapped into IPv6 as the IPv4 address", () => {
    expect(specialRange("::ffff:127.0.0.1")).toBe("loopback");
    expect(specialRange("::ffff:a9fe:a9fe")).toBe("linkLocal");
    expect(specialRange("::ffff:8.8.8.8")).toBeUndefined();
  });

  it("refuses what is not an IP address, including inet_aton's spellings", () => {
    for (const text of ["localhost", "", "127.1", "0x7f.0.0.1", "2130706433"])
      expect(specialRange(text), text).toBeDefined();
  });
});

describe("webhookUrlProblem", () => {
  it("takes http and https URLs to names and public addresses", () => {
    for (const url of ["https://hooks.example.com/delegations", "http://8.8.8.8:8080/x", "https://[2606:4700::1111]/"])
      expect(webhookUrlProblem(url, false), url).toBeUndefined();
  });

  it("refuses private addresses however the URL spells them", () => {
    for (const url of [
      "http://127.0.0.1/",
      "http://2130706433/", // 127.0.0.1 as one number
      "http://0x7f.1/",
      "http://0177.0.0.1/",
      "http://[::1]:8080/",
      "http://[::ffff:127.0.0.1]/",
      "http://169.254.169.254/latest/meta-data/",
      "http://[fd00:ec2::254]/",
      "http://10.0.0.1/",
    ])
      expect(webhookUrlProblem(url, false), url).toMatch(/not a public address/);
  });

  it("allows private addresses when the operator does", () => {
    expect(webhookUrlProblem("http://127.0.0.1:9000/hook", true)).toBeUndefined();
  });

  it("refuses other schemes, relative URLs and credentials in the URL, whatever is allowed", () => {
    for (const allow of [false, true]) {
      expect(webhookUrlProblem("ftp://example.com/", allow)).toMatch(/only http and https/);
      expect(webhookUrlProblem("file:///etc/passwd", allow)).toMatch(/only http and https/);
      expect(webhookUrlProblem("/hook", allow)).toMatch(/absolute/);
      expect(webhookUrlProblem("https://user:secret@example.com/", allow)).toMatch(/password/);
    }
  });
});

describe("guardedLookup", () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((_, res) => res.end("reached"));
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

  /** GET http://localhost:port/ with the lookup given: the body, or the error's code and message. */
  const fetchLocalhost = (allowPrivate: boolean) =>
    new Promise<string>((resolve) => {
      const req = get({ host: "localhost", port, path: "/", family: 4, lookup: guardedLookup(allowPrivate) }, (res) => {
        let body = "";
        res.on("data", (chunk) => (body += chunk));
        res.on("end", () => resolve(body));
      });
      req.on("error", (error: NodeJS.ErrnoException) => resolve(`${error.code}: ${error.message}`));
    });

  it("refuses a name that resolves to a loopback address before connecting", async () => {
    expect(await fetchLocalhost(false)).toMatch(/^EADDRNOTPUBLIC: localhost resolves to 127\.0\.0\.1 \(loopback\)/);
  });

  it("connects to it when private addresses are allowed", async () => {
    expect(await fetchLocalhost(true)).toBe("reached");
  });

  it("answers every address when asked for all", async () => {
    const lookup = guardedLookup(true);
    const all = await new Promise<unknown>((ok) => lookup("localhost", { all: true, family: 4 }, (_, a) => ok(a)));
    expect(all).toEqual(expect.arrayContaining([{ address: "127.0.0.1", family: 4 }]));
  });
});
