/**
 * What a replica (`npm run serve`, its processes tagged as bench/procs.ts tags them) spends: the CPU
 * time (/proc/<pid>/stat) of its whole process tree, and of the Postgres backends connected to it
 * (told by their client ports in pg_stat_activity), those of its access connections (the keys and
 * the keyless budget: on a hot standby's replica, the primary's work) apart.
 */
import type pg from "pg";
import { ACCESS_APPLICATION_NAMES } from "../api/access/open";
import { localPorts, processCommand, processTicks, taggedPids, ticksBetween, ticksPerSecond } from "./procs";

/**
 * CPU time over a span of `spanS` seconds, in seconds: the replica's processes', and its Postgres
 * backends' (undefined: not visible here), of which `access` on its access connections, and
 * `backends` were there at its end.
 */
export type SpanCpu = {
  spanS: number;
  replica: number;
  postgres: number | undefined;
  access: number | undefined;
  backends: number;
};

/** Before an idle span: under this share of one core for a second, at most this long. */
const QUIET_SHARE = 0.1;
const QUIET_WAIT_MS = 30_000;

export const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

/** Whether this machine's /proc shows Postgres's backends (else Postgres runs elsewhere, or in a container). */
export async function backendsVisible(db: pg.Client): Promise<boolean> {
  const { rows } = await db.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
  return processCommand(rows[0]!.pid)?.startsWith("postgres") ?? false;
}

/** CPU ticks so far of the replica's processes (`tag`), of its Postgres backends, and of its access ones. */
async function serviceTicks(db: pg.Client, tag: string, visible: boolean) {
  const pids = taggedPids(tag);
  const replica = processTicks(pids);
  if (!visible) return { replica, postgres: undefined, access: undefined };
  const ports = localPorts(pids);
  const { rows } = await db.query<{ pid: number; port: number; name: string }>(
    "SELECT pid, client_port AS port, application_name AS name FROM pg_stat_activity WHERE client_port IS NOT NULL",
  );
  const backends = rows.filter((r) => ports.has(r.port));
  const access = backends.filter((r) => Object.values(ACCESS_APPLICATION_NAMES).includes(r.name));
  return {
    replica,
    postgres: processTicks(backends.map((r) => r.pid)),
    access: processTicks(access.map((r) => r.pid)),
  };
}

/**
 * Waits (QUIET_WAIT_MS at most) until the replica's processes spend under QUIET_SHARE of one core
 * over a second: a replica just started may still be settling what it loaded, which is no idle.
 */
export async function quiet(tag: string): Promise<void> {
  const hz = ticksPerSecond();
  for (let waited = 0; waited < QUIET_WAIT_MS; waited += 1_000) {
    const before = processTicks(taggedPids(tag));
    await sleep(1_000);
    if (ticksBetween(before, processTicks(taggedPids(tag))) / hz < QUIET_SHARE) return;
  }
}

/** `work`'s value, and what the replica's processes spent while it ran (backends alive at its end). */
export async function cpuOver<T>(
  db: pg.Client,
  tag: string,
  visible: boolean,
  work: () => Promise<T>,
): Promise<{ value: T; cpu: SpanCpu }> {
  const hz = ticksPerSecond();
  const started = performance.now();
  const before = await serviceTicks(db, tag, visible);
  const value = await work();
  const after = await serviceTicks(db, tag, visible);
  const spanS = (performance.now() - started) / 1000;
  const replica = ticksBetween(before.replica, after.replica) / hz;
  const postgres = after.postgres && ticksBetween(before.postgres!, after.postgres) / hz;
  const access = after.access && ticksBetween(before.access!, after.access) / hz;
  return { value, cpu: { spanS, replica, postgres, access, backends: after.postgres?.size ?? 0 } };
}

/** The CPU seconds of the whole service in a span: its processes' and its backends'. */
export const wholeService = (c: SpanCpu) => c.replica + (c.postgres ?? 0);

/** The CPU seconds of `part` of the service in `span` beyond what it spends idle, at its rate in `idle`. */
export const beyondIdle = (span: SpanCpu, idle: SpanCpu, part: (c: SpanCpu) => number = wholeService) =>
  part(span) - (part(idle) / idle.spanS) * span.spanS;
