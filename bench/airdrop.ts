/**
 * The airdrop figure: a snapshot's checks (`o.airdropChecks` v2 checks of every kind, drawn as the
 * batches' are) at one past block, asked by one client the way the README's recipe does, through
 * the typed client's checkMany (client/batch.ts: batches of 10,000, four in flight), in a process of
 * its own (bench/airdrop-client.ts). The time is from its call to its last answer, beside the CPU
 * the client took meanwhile (it shares the machine); then a sample of the answers is held to the
 * seeded data.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { toJson } from "../api/http/json";
import type { V2BatchCheck } from "../client/batch";
import { Child, GiveUp, ROOT, waitFor } from "../devkit/processes";
import { Rng } from "../devkit/random";
import type { AirdropAnswers, AirdropRequest } from "./airdrop-client";
import type { Dataset } from "./dataset";
import type { BenchOptions } from "./options";
import { airdropChecks } from "./routes";

/**
 * Runs bench/airdrop-client.ts on `request` to its end; what it answered. `starting` is called as
 * it starts its checks, once it has read them.
 */
async function askInOwnProcess(request: AirdropRequest, starting: () => void): Promise<AirdropAnswers> {
  const dir = mkdtempSync(join(tmpdir(), "bench-airdrop-"));
  writeFileSync(join(dir, "request.json"), JSON.stringify(request));
  const client = new Child(join(ROOT, "node_modules/.bin/tsx"), ["bench/airdrop-client.ts", dir]);
  const exited = new Promise((ok) => client.process.once("exit", ok));
  try {
    const ready = async () => {
      if (!client.running) throw new GiveUp(`the airdrop's client exited:\n${client.output.slice(-3000)}`);
      return existsSync(join(dir, "ready")) || undefined;
    };
    await waitFor("the airdrop's client to read its checks", ready, 300_000);
    starting();
    writeFileSync(join(dir, "go"), "");
    const code = await exited;
    if (code !== 0) throw new Error(`the airdrop's client exited (${code}):\n${client.output.slice(-3000)}`);
    return JSON.parse(readFileSync(join(dir, "answers.json"), "utf8")) as AirdropAnswers;
  } finally {
    // Stopped whatever failed meanwhile (a wait that timed out): nothing of it outlives the airdrop.
    await client.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `clientCpuMs`: the CPU the client's process took from the call to its last answer. */
export type AirdropFigure = { checks: number; block: bigint; ms: number; clientCpuMs: number; verified: number };

/** Answers checked against the seeded data after the run. */
const SAMPLE = 2_000;

export async function measureAirdrop(
  o: BenchOptions,
  data: Dataset,
  service: { url: string; headers: Record<string, string> },
  seed: number,
  log: (line: string) => void,
  starting: () => void = () => {},
): Promise<AirdropFigure> {
  const { block, checks } = airdropChecks(data, o.airdropChecks, seed);
  const apiKey = service.headers["X-API-KEY"];
  const {
    answers,
    block: answeredAt,
    ms,
    cpuMs: clientCpuMs,
  } = await askInOwnProcess(
    {
      url: service.url,
      ...(apiKey === undefined ? {} : { apiKey }),
      chainId: data.chainId,
      blockNumber: block.toString(),
      checks: checks.map((c) => c.item as V2BatchCheck),
    },
    starting,
  );
  if (answeredAt !== block.toString())
    throw new Error(`the airdrop's checks were answered at ${answeredAt}, not ${block}`);
  const rng = new Rng(seed + 1);
  const sample = Array.from({ length: Math.min(SAMPLE, checks.length) }, () => rng.int(checks.length));
  for (const i of sample) {
    const [got, expected] = [answers[i], toJson(checks[i]!.answer(block))];
    if (got !== expected)
      throw new Error(
        `airdrop check ${i} at block ${block}: ${toJson(checks[i]!.item)} answered ${got}, not ${expected}`,
      );
  }
  log(
    `airdrop: ${checks.length.toLocaleString("en")} v2 checks at block ${block} through checkMany in ` +
      `${(ms / 1000).toFixed(2)} s, the client's CPU ${(clientCpuMs / 1000).toFixed(1)} s ` +
      `(${sample.length} answers verified)`,
  );
  return { checks: checks.length, block, ms, clientCpuMs, verified: sample.length };
}
