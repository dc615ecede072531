/**
 * Shutdown: SIGTERM to `npm start` (the indexer with its API) and to `npm run serve` (an
 * API replica), each under a steady stream of requests, as an orchestrator stops a container: the
 * process exits within 10 s, and every process it started with it (npm passes the signal to its
 * own child alone: its script must `exec` the service), every request answered is answered in full
 * and correctly (as the registry answers at the block it names), and every request sent before the
 * signal on a connection the process had accepted is answered; the others may be refused. And
 * kill -9 of one of two API replicas under load: the other answers every request, right.
 */

import { randomBytes } from "node:crypto";
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Address, zeroHash } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Anvil, startAnvil } from "../devkit/anvil";
import { ask } from "../devkit/ask";
import { abis, installRegistries } from "../devkit/oracle";
import { Child, freePort, waitFor } from "../devkit/processes";
import { callView, chainClient } from "../devkit/rpc";
import { sendWrite } from "../devkit/send";
import { createApiKey, startReplica, startService } from "../devkit/service";

const CHAIN_ID = 31337;
const CONNECTIONS = 16;
const EXIT_WITHIN_MS = 10_000;
/** Requests answered before the signal: the loops are well under way when it comes. */
const ANSWERED_BEFORE = 50;

let anvil: Anvil;
let registries: { v1: Address; v2: Address };
let accounts: Address[];
let path: string;
let expected: string;
/** The registry's answer at each block an answer named (X-Indexed-Block): each worker has a copy of its own. */
const truths = new Map<string, Promise<string>>();
const truthAt = (block: string) => {
  if (!truths.has(block))
    truths.set(
      block,
      callView(
        anvil.url,
        abis.v2,
        registries.v2,
        "checkDelegateForAll",
        [accounts[2]!, accounts[1]!, zeroHash],
        BigInt(block),
      ).then(
        String,
        (e: Error & { shortMessage?: string }) => `the registry's error at ${block}: ${e.shortMessage ?? e.message}`,
      ),
    );
  return truths.get(block)!;
};

beforeAll(async () => {
  anvil = await startAnvil({ chainId: CHAIN_ID });
  registries = await installRegistries(anvil.url);
  accounts = await chainClient(anvil.url).getAddresses();
  const block = await sendWrite(anvil.url, abis.v2, accounts[1]!, registries.v2, "delegateAll", [
    accounts[2]!,
    zeroHash,
    true,
  ]);
  expected = String(
    await callView(
      anvil.url,
      abis.v2,
      registries.v2,
      "checkDelegateForAll",
      [accounts[2]!, accounts[1]!, zeroHash],
      block,
    ),
  );
  expect(expected).toBe("true");
  path = `/registry/v2/check/all?chainId=${CHAIN_ID}&from=${accounts[1]}&to=${accounts[2]}`;
});

afterAll(async () => {
  await anvil?.stop();
});

type Outcome = {
  sentAt: number;
  /** Whether it went on a connection the service had answered on before: one it had accepted. */
  onAnswered?: boolean;
  status?: number;
  body?: string;
  block?: string;
  error?: string;
};

/** Each request's number, in a header of its own, by which its undici events are told apart. */
const SEQUENCE = "x-test-sequence";

/**
 * Which connection each request went on, as undici tells it: whether the service had answered on
 * that connection before (then the service had accepted it). A connection the kernel has taken but
 * the service has not yet accepted is not the service's yet: under load, Node accepts queued
 * connections over several turns of its event loop, and closing the listening socket resets what
 * is still queued, as TCP does with any server that stops.
 */
function followConnections(outcomes: Map<string, Outcome>) {
  const socketOf = new WeakMap<object, object>();
  const answeredOn = new WeakSet<object>();
  const sent = (message: unknown) => {
    const { request, headers, socket } = message as { request: object; headers: string; socket: object };
    socketOf.set(request, socket);
    const sequence = new RegExp(`^${SEQUENCE}: (\\d+)`, "im").exec(headers)?.[1];
    const outcome = sequence === undefined ? undefined : outcomes.get(sequence);
    if (outcome) outcome.onAnswered = answeredOn.has(socket);
  };
  const answered = (message: unknown) => {
    const socket = socketOf.get((message as { request: object }).request);
    if (socket) answeredOn.add(socket);
  };
  subscribe("undici:client:sendHeaders", sent);
  subscribe("undici:request:headers", answered);
  return () => {
    unsubscribe("undici:client:sendHeaders", sent);
    unsubscribe("undici:request:headers", answered);
  };
}

/** The service's answer to `path`, as it comes: never asked again, however long it takes. */
const answer = (url: string, headers: Record<string, string>) =>
  ask(url, path, { headers, timeoutMs: 0, reask: false });

/**
 * Requests to `url` on CONNECTIONS loops until `child` exits; `signal` is sent once the loops have
 * run a while. What each request got, when the signal was sent, and how long the exit took.
 */
async function stopUnderLoad(url: string, headers: Record<string, string>, child: Child, signal: () => void) {
  await waitFor(
    "the delegation to be indexed",
    async () => ((await answer(url, headers)).text === expected ? true : undefined),
    60_000,
  );
  const outcomes: Outcome[] = [];
  const bySequence = new Map<string, Outcome>();
  const stopFollowing = followConnections(bySequence);
  let exited = false;
  const loops = Array.from({ length: CONNECTIONS }, async () => {
    while (!exited) {
      const outcome: Outcome = { sentAt: Date.now() };
      const sequence = String(outcomes.push(outcome));
      bySequence.set(sequence, outcome);
      try {
        const a = await answer(url, { ...headers, [SEQUENCE]: sequence });
        outcome.status = a.status;
        outcome.body = a.text;
        outcome.block = a.headers.get("X-Indexed-Block") ?? undefined;
      } catch (error) {
        outcome.error = (error as Error & { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
        await new Promise((ok) => setTimeout(ok, 50));
      }
    }
  });
  // The signal comes once many requests have been answered, however busy the machine (its cores are
  // shared with other test files): expectCleanStop holds each of them, so none passes for want of any.
  await waitFor(
    "the loops to have been answered a while",
    async () => (outcomes.filter((o) => o.status !== undefined).length > ANSWERED_BEFORE ? true : undefined),
    30_000,
  );
  const signalledAt = Date.now();
  signal();
  // Every process of its group: npm exits once its child has, and a shell between them would leave
  // the service running, unsignalled.
  await waitFor("the process and all it started to exit", async () => (child.groupAlive ? undefined : true), 30_000);
  const exitMs = Date.now() - signalledAt;
  exited = true;
  await Promise.all(loops);
  stopFollowing();
  const refused = outcomes.filter((o) => o.error !== undefined).length;
  const fresh = outcomes.filter((o) => o.sentAt < signalledAt && !o.onAnswered).length;
  console.log(
    `[shutdown] ${url}: the process exited ${exitMs} ms after the signal; ${outcomes.length} requests, ${refused} ` +
      `refused; ${fresh} sent before it on a connection not yet answered on`,
  );
  return { outcomes, signalledAt, exitMs };
}

/** What was wrong with each answer of `outcomes`: not 200, or not the registry's at the block it names. */
async function wrongAnswers(outcomes: Outcome[]): Promise<string[]> {
  const wrong: string[] = [];
  for (const o of outcomes.filter((o) => o.status !== undefined)) {
    const truth = o.status === 200 && o.block !== undefined ? await truthAt(o.block) : undefined;
    if (o.body !== truth) wrong.push(`${o.status} ${o.body} at ${o.block}, not ${truth}`);
  }
  return wrong;
}

async function expectCleanStop({ outcomes, signalledAt, exitMs }: Awaited<ReturnType<typeof stopUnderLoad>>) {
  expect(exitMs, "exit after SIGTERM, in ms").toBeLessThanOrEqual(EXIT_WITHIN_MS);
  // Sent before the signal on a connection the service had accepted: answered, in full, right.
  const before = outcomes.filter((o) => o.sentAt < signalledAt && o.onAnswered);
  expect(before.length).toBeGreaterThan(ANSWERED_BEFORE / 2);
  expect(before.filter((o) => o.error !== undefined).map((o) => o.error)).toEqual([]);
  // Any other: answered right, or refused; never a server error or a wrong answer.
  expect(await wrongAnswers(outcomes)).toEqual([]);
}

describe("SIGTERM", () => {
  it("npm start: in-flight requests finish, and it exits within 10 s", async () => {
    const port = await freePort();
    const schema = `shutdown_${Date.now().toString(36)}`;
    const cleared = Object.fromEntries(
      Object.keys(process.env)
        .filter((n) => n.startsWith("PONDER_RPC_URL_"))
        .map((n) => [n, ""]),
    );
    const dir = mkdtempSync(join(tmpdir(), "shutdown-test-"));
    const adminToken = randomBytes(24).toString("hex");
    const child = new Child("npm", ["start", "--silent", "--", "--schema", schema], {
      ...cleared,
      PONDER_RPC_URL_31337: anvil.url,
      PORT: String(port),
      PGLITE_DIR: `${dir}/pglite`,
      START_BLOCKS_FILE: `${dir}/start-blocks.json`,
      ACCESS_SCHEMA: `access_${schema}`,
      ADMIN_TOKEN: adminToken,
    });
    try {
      const url = `http://127.0.0.1:${port}`;
      await waitFor(
        "npm start to be ready",
        async () => ((await fetch(`${url}/ready`)).status === 200 ? true : undefined),
        120_000,
      );
      const headers = { "X-API-KEY": await createApiKey(url, adminToken) };
      // SIGTERM to npm alone, as a container runtime sends it to its first process.
      await expectCleanStop(
        await stopUnderLoad(url, headers, child, () => process.kill(child.process.pid!, "SIGTERM")),
      );
    } finally {
      await child.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.runIf(process.env.DATABASE_URL)("npm run serve: in-flight requests finish, and it exits within 10 s", async () => {
    const service = await startService({ rpc: { [CHAIN_ID]: anvil.url } });
    try {
      const replica = await startReplica(service, { API_WORKERS: "2" });
      await expectCleanStop(
        await stopUnderLoad(replica.url, service.headers, replica.child, () =>
          process.kill(replica.child.process.pid!, "SIGTERM"),
        ),
      );
      await replica.stop();
    } finally {
      await service.stop();
    }
  });

  it.runIf(process.env.DATABASE_URL)(
    "kill -9 of one API process under load: the other keeps serving, every answer right",
    async () => {
      const service = await startService({ rpc: { [CHAIN_ID]: anvil.url } });
      const [kept, killed] = await Promise.all([
        startReplica(service, { API_WORKERS: "1" }),
        startReplica(service, { API_WORKERS: "1" }),
      ]);
      try {
        const { outcomes } = await stopUnderLoad(kept.url, service.headers, killed.child, () =>
          process.kill(-killed.child.process.pid!, "SIGKILL"),
        );
        expect(outcomes.length).toBeGreaterThan(100);
        expect(outcomes.filter((o) => o.error !== undefined).map((o) => o.error)).toEqual([]);
        expect(await wrongAnswers(outcomes)).toEqual([]);
        expect((await answer(kept.url, service.headers)).text).toBe(expected);
      } finally {
        await Promise.all([kept.stop(), killed.stop()]);
        await service.stop();
      }
    },
  );
});
