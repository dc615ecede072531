import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { type ChainAlarms, NO_ALARMS, refuseWhileAlarmed } from "./chain-alarms";

const alarmed = (chains: Record<number, string>): ChainAlarms => ({
  ...NO_ALARMS,
  current: () => new Map(Object.entries(chains).map(([id, detail]) => [Number(id), detail])),
});
const app = (alarms: ChainAlarms) =>
  new Hono().use("/graphql", refuseWhileAlarmed(alarms)).post("/graphql", (c) => c.json({ data: {} }));

describe("refuseWhileAlarmed", () => {
  it("lets requests through while no chain is alarmed", async () => {
    const res = await app(NO_ALARMS).request("/graphql", { method: "POST" });
    expect(res.status).toBe(200);
  });

  it("refuses every request while any chain is alarmed: 503 chain_reorganized with the alarm's detail", async () => {
    const res = await app(alarmed({ 10: "chain 10: block 5 was replaced" })).request("/graphql", { method: "POST" });
    expect(res.status).toBe(503);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(await res.json()).toMatchObject({ code: "chain_reorganized", detail: "chain 10: block 5 was replaced" });
  });
});
