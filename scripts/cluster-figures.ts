/**
 * `npm run serve`'s workers share one port, so a scrape of `/metrics` reaches one of them: that
 * worker asks the primary, which gathers every worker's figures with prom-client's
 * AggregatorRegistry (each worker's registry of api/http/metrics.ts's processFigures, summed metric
 * by metric and label by label) and hands the text back.
 */
import cluster from "node:cluster";
import type { AggregatorRegistry, PrometheusContentType, Registry } from "prom-client";

type Message = { figures: "gather"; id: number } | { figures: "gathered"; id: number; text?: string; error?: string };

const isMessage = (message: unknown): message is Message => typeof (message as Message | null)?.figures === "string";

/**
 * A worker waits this long for the primary's answer. The primary answers within 5 s: prom-client
 * gives up on workers that have not reported by then.
 */
const GATHER_MS = 6_000;

/**
 * prom-client, imported where it is used: the primary only forks until the first scrape, and the
 * module costs it about 13 MB resident (docs/performance.md, "Batches allocating half as much").
 */
const promClient = () => import("prom-client");

/** In the primary: gathers the workers' figures for whichever worker asks. */
export function gatherWorkerFigures(): void {
  let aggregator: Promise<AggregatorRegistry<PrometheusContentType>> | undefined;
  cluster.on("message", (worker, message: unknown) => {
    if (!isMessage(message) || message.figures !== "gather") return;
    aggregator ??= promClient().then((prom) => new prom.AggregatorRegistry());
    void aggregator
      .then((registry) => registry.clusterMetrics())
      .then(
        (text) => ({ text }),
        (error: Error) => ({ error: error.message }),
      )
      .then((answer) => {
        if (worker.isConnected()) worker.send({ figures: "gathered", id: message.id, ...answer } satisfies Message);
      });
  });
}

/**
 * In a worker (or a process serving alone): reports the figures `own` holds when the primary
 * gathers them, from now on (so call it as the worker starts), and returns a function giving every
 * worker's figures summed, as Prometheus text (its own when it serves alone). It rejects when the
 * primary could not gather them all.
 */
export async function workerFigures(own: Registry): Promise<() => Promise<string>> {
  if (!cluster.isWorker) return () => own.metrics();
  const { AggregatorRegistry } = await promClient();
  AggregatorRegistry.setRegistries(own);
  // Made for what its constructor does in a worker: it starts answering the primary's requests.
  new AggregatorRegistry();
  const waiting = new Map<number, (answer: Message & { figures: "gathered" }) => void>();
  let next = 0;
  process.on("message", (message: unknown) => {
    if (isMessage(message) && message.figures === "gathered") waiting.get(message.id)?.(message);
  });
  return () =>
    new Promise((done, fail) => {
      const id = next++;
      const timer = setTimeout(
        () => finish({ figures: "gathered", id, error: "the primary did not answer" }),
        GATHER_MS,
      );
      const finish = (answer: Message & { figures: "gathered" }) => {
        waiting.delete(id);
        clearTimeout(timer);
        if (answer.text === undefined) fail(new Error(`the workers' figures: ${answer.error}`));
        else done(answer.text);
      };
      waiting.set(id, finish);
      process.send!({ figures: "gather", id } satisfies Message);
    });
}
