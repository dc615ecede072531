/**
 * Scale-out past one machine, modelled, not measured on two hosts: one machine cannot
 * give two replica hosts two cores each. A fresh `npm run serve` (TRUSTED_PROXY=true) answers every
 * check route's requests, keyed and then keyless (each keyless request from a forwarded address of
 * its own, so that no budget runs out), at the bench's connections; over each run, the CPU per 200
 * answer, beyond the same span idle, of what a replica host on a hot standby runs (the replica's
 * processes and its reading backends) and of what the primary runs for it (its access connections:
 * the keys and the keyless budget). bench/report.ts models from these what two such hosts serve
 * beside one, each with this machine's cores, on a primary with as many.
 */
import type pg from "pg";
import type { Service } from "../devkit/service";
import type { Cleanup } from "./cleanup";
import type { Dataset } from "./dataset";
import { checkRequests, forwarded } from "./hostile";
import { type LoadRequest, runLoad } from "./load";
import { type RouteFigure, settle } from "./measure";
import type { BenchOptions } from "./options";
import { distinctRequests } from "./routes";
import { backendsVisible, cpuOver, quiet, type SpanCpu, sleep } from "./service-cpu";
import { startServe } from "./stack";

/** A load run of the scale section, and what the replica spent over it. */
export type ScaleRun = RouteFigure & { cpu: SpanCpu };

export type ScaleFigures = { idle: SpanCpu; keyed: ScaleRun; keyless: ScaleRun };

/** Distinct requests of each run: every check route's, drawn at random. */
const REQUESTS = 20_000;

/** The scale section's figures (see the module's head). */
export async function measureScale(
  o: BenchOptions,
  cleanup: Cleanup,
  db: pg.Client,
  service: Service,
  data: Dataset,
  log: (line: string) => void,
): Promise<ScaleFigures> {
  return cleanup.scope(async () => {
    const tag = `scale-${process.pid}-${Date.now()}`;
    const { url } = await startServe(cleanup, service, tag, { TRUSTED_PROXY: "true" });
    const visible = await backendsVisible(db);
    await settle(url, service.headers);
    await quiet(tag);
    log(`scale: npm run serve ready; measuring it idle for ${o.durationS} s, then under keyed and keyless checks`);
    const { cpu: idle } = await cpuOver(db, tag, visible, () => sleep(o.durationS * 1000));
    const run = async (label: string, headers: Record<string, string>, list: LoadRequest[]): Promise<ScaleRun> => {
      await settle(url, service.headers);
      const { value: result, cpu } = await cpuOver(db, tag, visible, () =>
        runLoad(label, {
          url,
          connections: o.connections,
          durationS: o.durationS,
          warmupS: 0,
          headers,
          requests: list,
        }),
      );
      return { label, result, connections: o.connections, queries: distinctRequests(list), cpu };
    };
    const keyed = await run(
      "scale: every check route, keyed",
      service.headers,
      checkRequests(data, o.seed + 13, REQUESTS),
    );
    // The same requests, each from an address of its own, apart from the hostile flood's (it spent theirs).
    const keyless = await run(
      "scale: every check route, keyless",
      {},
      checkRequests(data, o.seed + 13, REQUESTS, (i) => forwarded(2 ** 23 + i)),
    );
    return { idle, keyed, keyless };
  });
}
