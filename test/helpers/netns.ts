/**
 * Hosts apart on this one machine, for the tests: network namespaces the test makes and removes,
 * each host's joined by a veth pair to a switch (a bridge in a namespace of its own), with one
 * address on a private subnet that exists only inside them, so no traffic leaves them and this
 * machine's own network never sees them. Processes run in a host with `ip netns exec`.
 *
 * Between hosts, relays (relay.mjs) add the one-way delay that `tc qdisc ... netem` would: this
 * machine's kernel has no netem (CONFIG_NET_SCH_NETEM), nor any other qdisc that delays. A client
 * in one host reaches a server in another through a relay in its own host, on its loopback; the
 * relay connects over the veth, from the client host's address, as the client would.
 *
 * The test process stays in this machine's namespace and reaches a host's loopback ports through
 * Unix sockets, which namespaces share (they are files): a relay in the host listens on one, and a
 * relay here (`relay(undefined, …)`) gives it a loopback port.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { Child, GiveUp, ROOT, waitFor } from "../../devkit/processes";

const RELAY = join(ROOT, "test/helpers/relay.mjs");
/** The hosts' subnet: it exists only inside their namespaces. */
const SUBNET = "10.31.0";

/** `ip` with `args`; its output. */
const ip = (args: string[]) => execFileSync("ip", args, { stdio: "pipe" }).toString();

/** A relay's route (relay.mjs): what it listens on, what it connects to, the delay each way. */
export type Route = { listen: string; target: string; delayMs?: number };

/** Why this machine cannot make the hosts (namespaces, veth pairs, a bridge); undefined: it can. */
export function netnsRefusal(): string | undefined {
  const probe = `netns-probe-${process.pid}`;
  try {
    ip(["netns", "add", probe]);
    ip(["-n", probe, "link", "add", "br0", "type", "bridge"]);
    ip(["link", "add", "probe0", "netns", probe, "type", "veth", "peer", "name", "probe1", "netns", probe]);
    return undefined;
  } catch (error) {
    const why = (error as { stderr?: Buffer }).stderr ?? String(error);
    return `ip netns is not permitted here: ${why.toString().trim()}`;
  } finally {
    try {
      ip(["netns", "del", probe]);
    } catch {
      // It was never made.
    }
  }
}

/** The process ids inside namespace `ns`. */
const pidsIn = (ns: string) =>
  ip(["netns", "pids", ns])
    .split("\n")
    .filter((line) => /^\d+$/.test(line))
    .map(Number);

/** Kills what runs in namespace `ns` (it was made for a test: everything there is the test's) and removes it. */
function removeNamespace(ns: string): void {
  for (const pid of pidsIn(ns)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone already.
    }
  }
  for (let tries = 0; tries < 50 && pidsIn(ns).length > 0; tries++) execFileSync("sleep", ["0.1"]);
  // Its veth ends and bridge go with it.
  ip(["netns", "del", ns]);
}

/** Hosts on one switch, their namespaces named `<prefix>-<pid>-<host>` (this process's id). */
export class Lan {
  private constructor(
    private readonly prefix: string,
    private readonly hosts: string[],
  ) {}

  /**
   * Makes the hosts (and the switch), after removing any of an earlier run of this test whose
   * process is gone (namespaces outlive a test killed before its cleanup). Hosts are numbered in
   * order on the subnet: the first is .1.
   */
  static create(prefix: string, hosts: string[]): Lan {
    const earlier = new RegExp(`^(${prefix}-(\\d+)-\\S+)`);
    for (const line of ip(["netns", "list"]).split("\n")) {
      const [, ns, pid] = earlier.exec(line) ?? [];
      if (ns !== undefined && !alive(Number(pid))) removeNamespace(ns);
    }
    const lan = new Lan(`${prefix}-${process.pid}`, hosts);
    try {
      const sw = lan.ns("switch");
      ip(["netns", "add", sw]);
      ip(["-n", sw, "link", "add", "br0", "type", "bridge"]);
      ip(["-n", sw, "link", "set", "br0", "up"]);
      for (const host of hosts) {
        const ns = lan.ns(host);
        ip(["netns", "add", ns]);
        ip(["-n", ns, "link", "set", "lo", "up"]);
        ip(["link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", host, "netns", sw]);
        ip(["-n", sw, "link", "set", host, "master", "br0", "up"]);
        ip(["-n", ns, "addr", "add", `${lan.address(host)}/24`, "dev", "eth0"]);
        ip(["-n", ns, "link", "set", "eth0", "up"]);
      }
    } catch (error) {
      lan.remove();
      throw error;
    }
    return lan;
  }

  /** The namespace of `host`. */
  ns(host: string): string {
    return `${this.prefix}-${host}`;
  }

  /** The host's address on the switch. */
  address(host: string): string {
    const i = this.hosts.indexOf(host);
    if (i < 0) throw new Error(`no host ${host}`);
    return `${SUBNET}.${i + 1}`;
  }

  /** Starts `command` in `host`, as devkit's Child (its own process group), with `env` over ours. */
  run(host: string, command: string, args: string[], env: NodeJS.ProcessEnv = {}, cwd = ROOT): Child {
    return new Child("ip", ["netns", "exec", this.ns(host), command, ...args], env, cwd);
  }

  /** The switch's subnet, as pg_hba.conf names it. */
  subnet(): string {
    return `${SUBNET}.0/24`;
  }

  /** Runs `command` in `host` (in `cwd`) to its end; its output (throws with it when it fails). */
  exec(host: string, command: string, args: string[], cwd = ROOT): string {
    try {
      const argv = ["netns", "exec", this.ns(host), command, ...args];
      return execFileSync("ip", argv, { stdio: "pipe", cwd }).toString();
    } catch (error) {
      const { stdout, stderr } = error as { stdout?: Buffer; stderr?: Buffer };
      throw new Error(`${command} ${args.join(" ")} in ${host}: ${stderr ?? ""}${stdout ?? ""}`);
    }
  }

  /** A relay in `host` (undefined: here) with `routes`; resolves once it listens. */
  async relay(host: string | undefined, routes: Route[]): Promise<Child> {
    const args = [RELAY, ...routes.flatMap((r) => [r.listen, r.target, String(r.delayMs ?? 0)])];
    const child = host === undefined ? new Child(process.execPath, args) : this.run(host, process.execPath, args);
    await waitFor(
      `the relay in ${host ?? "this namespace"}`,
      async () => {
        if (!child.running) throw new GiveUp(`the relay exited: ${child.output}`);
        return child.output.includes("relaying") ? true : undefined;
      },
      10_000,
    );
    return child;
  }

  /** Kills everything in the hosts and the switch, and removes them; what is already gone is passed over. */
  remove(): void {
    for (const ns of [...this.hosts, "switch"].map((host) => this.ns(host))) {
      try {
        removeNamespace(ns);
      } catch {
        // Never made, or removed already.
      }
    }
  }
}

/** Whether process `pid` exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
