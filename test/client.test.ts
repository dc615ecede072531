/**
 * The typed client (client/): its documented example (client/example.ts, which docs/api.md shows
 * whole) against a service on anvil with the real registries, its answers equal to the contract's
 * eth_call and typed as the document says; an amount past 2^53 arrives exact, as a bigint. And the
 * client's types are the ones `npm run client:types` writes from the document now.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type Address, maxUint256, zeroHash } from "viem";
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import { delegationOf } from "../client/example";
import { createLookupClient } from "../client/index";
import { type Anvil, startAnvil } from "../devkit/anvil";
import { indexedBlock } from "../devkit/ask";
import { abis, installRegistries } from "../devkit/oracle";
import { ROOT, waitFor } from "../devkit/processes";
import { chainClient } from "../devkit/rpc";
import { type Service, startService } from "../devkit/service";
import { CLIENT_TYPES, clientTypes } from "../scripts/client-types";
import { docExample } from "./helpers/readme";

const CHAIN_ID = 31337;
let anvil: Anvil;
let service: Service;
let registry: Address;

beforeAll(async () => {
  anvil = await startAnvil();
  registry = (await installRegistries(anvil.url)).v2;
  service = await startService({ rpc: { [CHAIN_ID]: anvil.url } });
});

afterAll(async () => {
  await service?.stop();
  await anvil?.stop();
});

describe("the typed client", () => {
  it("is generated from the document as it is now", async () => {
    expect(readFileSync(CLIENT_TYPES, "utf8"), "client/openapi.ts is stale: npm run client:types").toBe(
      await clientTypes(),
    );
  });

  it("runs the documented example: answers equal to eth_call, typed, exact past 2^53", async () => {
    const example = readFileSync(join(ROOT, "client/example.ts"), "utf8");
    expect(docExample("docs/api.md", "ts", "delegationOf").trim()).toBe(
      example.replace('"./index"', '"./client"').trim(),
    );

    const chain = chainClient(anvil.url);
    const [cold, hot, other] = await chain.getAddresses();
    const token = "0x00000000000000000000000000000000000000aa" as Address;
    const amount = 10n ** 30n + 1n;
    const sent = [
      await chain.writeContract({
        account: cold!,
        chain: null,
        address: registry,
        abi: abis.v2,
        functionName: "delegateAll",
        args: [hot, zeroHash, true],
      }),
      await chain.writeContract({
        account: other!,
        chain: null,
        address: registry,
        abi: abis.v2,
        functionName: "delegateERC20",
        args: [hot, token, zeroHash, amount],
      }),
    ];
    const receipts = await Promise.all(sent.map((hash) => chain.waitForTransactionReceipt({ hash })));
    const last = receipts.at(-1)!.blockNumber;
    await waitFor("the writes indexed", async () =>
      ((await indexedBlock({ serviceUrl: service.url, chainId: CHAIN_ID })) ?? 0n) >= last ? true : undefined,
    );

    const read = (functionName: string, args: unknown[]) =>
      chain.readContract({ address: registry, abi: abis.v2, functionName, args });
    for (const [vault, expected] of [
      [cold!, maxUint256],
      [other!, amount],
    ] as const) {
      const answer = await delegationOf(service.url, hot!, vault, token, String(CHAIN_ID));
      expectTypeOf(answer.mayAct).toEqualTypeOf<boolean>();
      expectTypeOf(answer.amount).toEqualTypeOf<number | bigint>();
      expect(answer.mayAct).toBe(await read("checkDelegateForAll", [hot, vault, zeroHash]));
      const contract = await read("checkDelegateForERC20", [hot, vault, token, zeroHash]);
      expect(contract).toBe(expected);
      expect(answer.amount).toBe(contract);
      expect(BigInt(answer.block!)).toBeGreaterThanOrEqual(last);
    }
  });

  it("types the problems: a bad address is a 400 whose code and param the client reads", async () => {
    const api = createLookupClient(service.url, { apiKey: service.apiKey });
    const { data, error, response } = await api.GET("/registry/v2/check/all", {
      params: { query: { to: "0x12", from: "0x0000000000000000000000000000000000000001", chainId: "31337" } },
    });
    expect(data).toBeUndefined();
    expect(response.status).toBe(400);
    expect(error?.code).toBe("invalid_parameter");
    expect(error?.param).toBe("to");
  });
});
