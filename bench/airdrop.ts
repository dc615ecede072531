/**
 * The airdrop figure: a snapshot's checks (`o.airdropChecks` v2 checks of every kind, drawn as the
 * batches' are) at one past block, asked by one client the way the README's recipe does, through
 * the typed client's checkMany (client/batch.ts: batches of 10,000, four in flight). The time is
 * from its call to its last answer, beside the CPU the client took meanwhile (it shares the machine);
 * then a sample of the answers is held to the seeded data.
 */
import { toJson } from "../api/http/json";
import { checkMany, type V2BatchCheck } from "../client/batch";
import { createLookupClient } from "../client/index";
import { Rng } from "../devkit/random";
import type { Dataset } from "./dataset";
import type { BenchOptions } from "./options";
import { airdropChecks } from "./routes";

/** `clientCpuMs`: the CPU this process (the client) took from the call to its last answer. */
export type AirdropFigure = { checks: number; block: bigint; ms: number; clientCpuMs: number; verified: number };

/** Answers checked against the seeded data after the run. */
const SAMPLE = 2_000;

export async function measureAirdrop(
  o: BenchOptions,
  data: Dataset,
  service: { url: string; headers: Record<string, string> },
  seed: number,
  log: (line: string) => void,
): Promise<AirdropFigure> {
  const { block, checks } = airdropChecks(data, o.airdropChecks, seed);
  const apiKey = service.headers["X-API-KEY"];
  const api = createLookupClient(service.url, apiKey === undefined ? {} : { apiKey });
  const started = performance.now();
  const cpu = process.cpuUsage();
  const { answers, block: answeredAt } = await checkMany(
    api,
    "v2",
    checks.map((c) => c.item as V2BatchCheck),
    { chainId: data.chainId, blockNumber: block.toString() },
  );
  const ms = performance.now() - started;
  const { user, system } = process.cpuUsage(cpu);
  const clientCpuMs = (user + system) / 1000;
  if (answeredAt !== block) throw new Error(`the airdrop's checks were answered at ${answeredAt}, not ${block}`);
  const rng = new Rng(seed + 1);
  const sample = Array.from({ length: Math.min(SAMPLE, checks.length) }, () => rng.int(checks.length));
  for (const i of sample) {
    const [got, expected] = [toJson(answers[i]), toJson(checks[i]!.answer(block))];
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
