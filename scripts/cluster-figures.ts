/**
 * `npm run serve`'s workers share one port, so a scrape of `/metrics` reaches one of them: that
 * worker asks the primary, which gathers every worker's figures (api/http/metrics.ts) and hands them back.
 */
import cluster, { type Worker } from "node:cluster";
import type { ProcessFigures } from "../api/http/metrics";

type Message =
  | { figures: "gather"; id: number }
  | { figures: "report"; id: number }
  | { figures: "reported"; id: number; own: ProcessFigures }
  | { figures: "gathered"; id: number; all: ProcessFigures[] };

const isMessage = (message: unknown): message is Message => typeof (message as Message | null)?.figures === "string";

/** A worker that does not report within this is left out (it is stuck or exiting). */
const GATHER_MS = 1_000;

/** In the primary: gathers the workers' figures for whichever worker asks. */
export function gatherWorkerFigures(): void {
  const gathers = new Map<
    number,
    { asker: Worker; askerId: number; all: ProcessFigures[]; expected: number; timer: NodeJS.Timeout }
  >();
  let next = 0;
  const finish = (id: number) => {
    const gather = gathers.get(id);
    if (!gather) return;
    gathers.delete(id);
    clearTimeout(gather.timer);
    if (gather.asker.isConnected())
      gather.asker.send({ figures: "gathered", id: gather.askerId, all: gather.all } satisfies Message);
  };
  cluster.on("message", (worker, message: unknown) => {
    if (!isMessage(message)) return;
    if (message.figures === "gather") {
      const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w?.isConnected() === true);
      const id = next++;
      gathers.set(id, {
        asker: worker,
        askerId: message.id,
        all: [],
        expected: workers.length,
        timer: setTimeout(() => finish(id), GATHER_MS),
      });
      for (const w of workers) w.send({ figures: "report", id } satisfies Message);
    } else if (message.figures === "reported") {
      const gather = gathers.get(message.id);
      if (!gather) return;
      gather.all.push(message.own);
      if (gather.all.length === gather.expected) finish(message.id);
    }
  });
}

/**
 * In a worker (or a process serving alone): reports `own` figures when the primary asks, and
 * returns a function giving every worker's figures (only its own when it serves alone, or when
 * the primary does not answer).
 */
export function workerFigures(own: () => ProcessFigures): () => Promise<ProcessFigures[]> {
  if (!cluster.isWorker) return async () => [own()];
  const waiting = new Map<number, (all: ProcessFigures[]) => void>();
  let next = 0;
  process.on("message", (message: unknown) => {
    if (!isMessage(message)) return;
    if (message.figures === "report")
      process.send!({ figures: "reported", id: message.id, own: own() } satisfies Message);
    else if (message.figures === "gathered") waiting.get(message.id)?.(message.all);
  });
  return () =>
    new Promise((done) => {
      const id = next++;
      const timer = setTimeout(() => finish([own()]), GATHER_MS * 2);
      const finish = (all: ProcessFigures[]) => {
        waiting.delete(id);
        clearTimeout(timer);
        done(all);
      };
      waiting.set(id, finish);
      process.send!({ figures: "gather", id } satisfies Message);
    });
}
