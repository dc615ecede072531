/**
 * A whole chain-wide history read as a warehouse loader reads it (docs/api.md's recipe): the first page
 * of `/registry/{v2,v1}/history?limit=N`, then each page its Link names, one after the other on one
 * connection, until a page has none. Every page is verified against the dataset (its events at
 * their places, the sampled ones whole) between requests, apart from the figure: events per second
 * of the pages' own time, from each request sent to its body received.
 */
import type { Dataset, EventLog, V1EventRow, V2EventRow } from "./dataset";
import { cpuShares } from "./procs";
import { historyPageWrong } from "./routes";

export type HistoryRead = {
  label: string;
  events: number;
  pages: number;
  /** The pages' own time, summed (ms), and their median. */
  ms: number;
  pageP50: number;
  /** CPU during the read, % of all cores: the machine's, and other work's (see load.ts). */
  machineCpu: number;
  othersCpu: number;
};

/** Reads the version's whole history in pages of `limit` (see the module's head), logged; throws if a page is wrong. */
export async function readHistory(
  base: string,
  version: "v1" | "v2",
  data: Dataset,
  limit: number,
  headers: Record<string, string>,
  log: (line: string) => void,
): Promise<HistoryRead> {
  const eventLog = data.events[version] as EventLog<V2EventRow | V1EventRow>;
  const known = new Map(eventLog.sample.items.map(({ index, row }) => [index, row]));
  const label = `${version} whole history, following Link at limit=${limit}`;
  const times: number[] = [];
  let events = 0;
  let next: string | undefined = `/registry/${version}/history?chainId=${data.chainId}&limit=${limit}`;
  const shares = cpuShares();
  while (next !== undefined) {
    const started = performance.now();
    const res = await fetch(base + next, { headers });
    const body = await res.text();
    times.push(performance.now() - started);
    const page = { status: res.status, body, headers: res.headers };
    const why = historyPageWrong(version, eventLog, events, limit, (k) => known.get(k), page);
    if (why !== undefined) throw new Error(`${label}: the page ${next} is wrong: ${why}`);
    events += (JSON.parse(body) as unknown[]).length;
    next = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get("link") ?? "")?.[1];
  }
  const [ms, pageP50] = [times.reduce((a, b) => a + b, 0), [...times].sort((a, b) => a - b)[(times.length - 1) >> 1]!];
  log(
    `${label}: ${events.toLocaleString("en")} events in ${times.length} pages, ` +
      `${Math.round(events / (ms / 1000)).toLocaleString("en")} events/s, page p50 ${pageP50.toFixed(1)} ms ` +
      "(every page verified)",
  );
  return { label, events, pages: times.length, ms, pageP50, ...shares.stop() };
}
