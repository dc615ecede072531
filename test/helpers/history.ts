import type { Address } from "viem";
import { rpc } from "../../devkit/rpc";
import type { Service } from "../../devkit/service";
import { serviceRows } from "./rows";

export type HistoryCheck = { events: { v1: number; v2: number }; mismatches: string[] };

/**
 * The service's history tables (v1_event, v2_event) against every log the registries emitted on
 * the chain: each log must be there exactly once, and nothing else. The mismatches name each log
 * missing, doubled or unknown.
 */
export async function historyMismatches(
  service: Pick<Service, "schema" | "pgliteDir">,
  rpcUrl: string,
  registries: { v1: Address; v2: Address },
  databaseUrl?: string,
): Promise<HistoryCheck> {
  const schema = `"${service.schema}"`;
  const rows = await serviceRows(
    service.pgliteDir,
    `SELECT 'v2' AS version, block_number::text AS block, log_index, transaction_hash FROM ${schema}.v2_event
     UNION ALL
     SELECT 'v1', block_number::text, log_index, transaction_hash FROM ${schema}.v1_event`,
    databaseUrl,
  );
  const logs = (await rpc(rpcUrl, "eth_getLogs", [
    { address: [registries.v1, registries.v2], fromBlock: "0x0", toBlock: "latest" },
  ])) as {
    address: string;
    blockNumber: string;
    logIndex: string;
    transactionHash: string;
  }[];
  const counts = new Map<string, number>();
  const events = { v1: 0, v2: 0 };
  for (const log of logs) {
    const version = log.address.toLowerCase() === registries.v2.toLowerCase() ? "v2" : "v1";
    events[version]++;
    const tx = log.transactionHash.toLowerCase();
    const key = `${version} block ${BigInt(log.blockNumber)} log ${Number(log.logIndex)} tx ${tx}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  for (const row of rows) {
    const tx = String(row.transaction_hash).toLowerCase();
    const key = `${row.version} block ${row.block} log ${row.log_index} tx ${tx}`;
    counts.set(key, (counts.get(key) ?? 0) - 1);
  }
  const mismatches = [...counts]
    .filter(([, n]) => n !== 0)
    .map(([key, n]) => (n > 0 ? `missing: ${key}` : `${-n} extra row(s): ${key}`));
  return { events, mismatches };
}
