/**
 * What processes cost, from /proc (Linux): the resident memory and CPU time of a process tree,
 * found by a tag in its environment (children inherit it, whatever launched them), the TCP ports
 * its sockets hold (to tell which Postgres backends serve it), and the machine's CPU time, and how
 * much of it went to processes the bench did not start (other work on a shared machine).
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/** The variable that marks a process tree the bench measures. */
export const TAG_VARIABLE = "BENCH_PROCESS";
/** The variable that marks every process of one bench run. */
export const RUN_VARIABLE = "BENCH_RUN";

/** The environment that tags a process tree for the memory figures. */
export const tagEnv = (tag: string) => ({ [TAG_VARIABLE]: tag });

const read = (path: string) => {
  try {
    return readFileSync(path, "latin1");
  } catch {
    return undefined; // Gone meanwhile, or another user's.
  }
};

const pids = () => readdirSync("/proc").filter((entry) => /^\d+$/.test(entry));

const hasVariable = (pid: string, variable: string, value: string) =>
  `\0${read(`/proc/${pid}/environ`) ?? ""}`.includes(`\0${variable}=${value}\0`);

export function taggedPids(tag: string): number[] {
  return pids()
    .filter((pid) => hasVariable(pid, TAG_VARIABLE, tag))
    .map(Number);
}

/** kB of one /proc/<pid>/status field. */
function statusKb(pid: number, field: "VmRSS" | "VmHWM"): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(read(`/proc/${pid}/status`) ?? "");
  return match ? Number(match[1]) : 0;
}

/** Each tagged process's resident memory now, in MB, by pid. */
export function memoryByProcess(tag: string): Map<number, number> {
  return new Map(taggedPids(tag).map((pid) => [pid, statusKb(pid, "VmRSS") / 1024]));
}

export type TreeMemory = { processes: number; rssMb: number; peakMb: number };

/** The tagged processes' resident memory now, and the sum of each one's own peak (VmHWM). */
export function treeMemory(tag: string): TreeMemory {
  const tree = taggedPids(tag);
  const sum = (field: "VmRSS" | "VmHWM") => tree.reduce((total, pid) => total + statusKb(pid, field), 0) / 1024;
  return { processes: tree.length, rssMb: sum("VmRSS"), peakMb: sum("VmHWM") };
}

/** Samples a tagged tree's total resident memory until stopped; the highest total seen. */
export function sampleTreeMemory(tag: string, everyMs = 100): { stop(): number } {
  let peak = 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, treeMemory(tag).rssMb);
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, treeMemory(tag).rssMb);
    },
  };
}

/** A process's command line, its arguments joined by spaces; undefined if it is gone or not readable. */
export const processCommand = (pid: number | string) => read(`/proc/${pid}/cmdline`)?.replaceAll("\0", " ");

/** A process's CPU time so far (user and system), in clock ticks; undefined if it is gone or not readable. */
export function ownTicks(pid: number | string): number | undefined {
  return statTicks(pid, 11);
}

/**
 * The CPU time, in clock ticks, of the children `pid` has waited for, and of theirs that they
 * waited for (Linux's cutime and cstime): what a process's finished subprocesses cost.
 */
export function reapedTicks(pid: number | string): number | undefined {
  return statTicks(pid, 13);
}

/** Two adjacent fields of /proc/<pid>/stat, summed; `at` counts from the field after the name. */
function statTicks(pid: number | string, at: number): number | undefined {
  const stat = read(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[at]) || 0) + (Number(fields[at + 1]) || 0);
}

/** CPU time so far, in clock ticks, of each of `of` that is still there, by pid. */
export function processTicks(of: Iterable<number | string>): Map<string, number> {
  const ticks = new Map<string, number>();
  for (const pid of of) {
    const own = ownTicks(pid);
    if (own !== undefined) ticks.set(String(pid), own);
  }
  return ticks;
}

/**
 * CPU time so far, in clock ticks, of each process of bench run `run`: those marked by
 * RUN_VARIABLE, and the Postgres processes working on its `database` (backends, autovacuum).
 */
export function runCpu(run: string, database: string): Map<string, number> {
  return processTicks(pids().filter((pid) => workingOn(pid, database) || hasVariable(pid, RUN_VARIABLE, run)));
}

/** Whether process `pid` is a Postgres process working on `database` (a backend, autovacuum). */
function workingOn(pid: string, database: string): boolean {
  const command = read(`/proc/${pid}/cmdline`) ?? "";
  return command.startsWith("postgres: ") && command.split(/[\s\0]+/).includes(database);
}

/** The database the bench runs on: DATABASE_URL's. */
export const runDatabase = () => new URL(process.env.DATABASE_URL ?? "postgres://-/-").pathname.slice(1);

/** CPU time so far, in clock ticks, of the Postgres processes working on `database`, by pid. */
export const postgresCpu = (database: string) => processTicks(pids().filter((pid) => workingOn(pid, database)));

/** Clock ticks per second, as /proc counts CPU time. */
export const ticksPerSecond = () => Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());

/** The local ports of the TCP sockets the processes hold open (from their fds and /proc/net/tcp*). */
export function localPorts(of: readonly number[]): Set<number> {
  const inodes = new Set<string>();
  for (const pid of of) {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // Gone meanwhile.
    }
    for (const fd of fds) {
      try {
        const socket = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (socket) inodes.add(socket[1]!);
      } catch {
        // Closed meanwhile.
      }
    }
  }
  const ports = new Set<number>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of (read(table) ?? "").split("\n").slice(1)) {
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      const fields = line.trim().split(/\s+/);
      if (fields.length > 9 && inodes.has(fields[9]!)) ports.add(Number.parseInt(fields[1]!.split(":")[1]!, 16));
    }
  }
  return ports;
}

/**
 * Ticks spent between two `runCpu` readings by the processes alive at the second (one that ended
 * meanwhile took its own along).
 */
export function ticksBetween(before: Map<string, number>, after: Map<string, number>): number {
  let total = 0;
  for (const [pid, ticks] of after) total += ticks - (before.get(pid) ?? 0);
  return total;
}

/** Busy and total CPU time of the whole machine so far (all cores), in clock ticks. */
export function machineCpu(): { busy: number; total: number } {
  const fields = readFileSync("/proc/stat", "latin1").split("\n", 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = fields.reduce((a, b) => a + b, 0);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  return { busy: total - idle, total };
}

/**
 * Starts measuring this bench run's CPU against the machine's (the run: RUN_VARIABLE in this
 * process's environment, and Postgres working on DATABASE_URL's database); `stop` gives the shares
 * since, in % of all cores: the machine's busy time, and the part of it other work took.
 */
export function cpuShares(): { stop(): { machineCpu: number; othersCpu: number } } {
  const ours = () => runCpu(process.env[RUN_VARIABLE] ?? "", runDatabase());
  const [machine, owned] = [machineCpu(), ours()];
  return {
    stop() {
      const [machineAfter, ownedAfter] = [machineCpu(), ours()];
      const ticks = Math.max(1, machineAfter.total - machine.total);
      const busy = machineAfter.busy - machine.busy;
      return {
        machineCpu: (100 * busy) / ticks,
        // The machine's busy time that none of the run's processes account for.
        othersCpu: (100 * Math.max(0, busy - ticksBetween(owned, ownedAfter))) / ticks,
      };
    },
  };
}
