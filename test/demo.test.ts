/**
 * `npm run demo` as a user runs it, with no RPC URL, no database configured and no network beyond
 * this machine (its Node processes refuse any other connection, and the test shows none was
 * tried): every request it prints answers what it says, and Ctrl-C (SIGINT to its process group,
 * as a terminal sends it) stops everything it started and removes its temporary directory.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Child, freePort, GiveUp, ROOT, waitFor } from "../devkit/processes";

type Example = { url: string; length: boolean; answer: string };

/** Each printed `curl -s '<url>'` line (maybe `| jq length`) with the `# → <answer>` line after it. */
function examples(output: string): Example[] {
  const lines = stripVTControlCharacters(output)
    .split("\n")
    .map((l) => l.trim());
  const out: Example[] = [];
  lines.forEach((line, i) => {
    const curl = /^curl -s '([^']+)'( \| jq length)?$/.exec(line);
    if (!curl) return;
    const answer = /^# → (.*)$/.exec(lines[i + 1] ?? "");
    expect(answer, `no "# → <answer>" line after: ${line}`).not.toBeNull();
    out.push({ url: curl[1]!, length: curl[2] !== undefined, answer: answer![1]! });
  });
  return out;
}

/** The state of each process (letter of /proc/<pid>/stat) and its parent. */
function processTable(): Map<number, { ppid: number; state: string }> {
  const table = new Map<number, { ppid: number; state: string }>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // "pid (comm) state ppid …": comm may hold spaces and parentheses.
      const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      table.set(Number(entry), { ppid: Number(ppid), state: state! });
    } catch {
      // The process ended while the table was read.
    }
  }
  return table;
}

function descendants(pid: number): number[] {
  const table = processTable();
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    for (const [child, { ppid }] of table) {
      if (ppid === parent) {
        found.push(child);
        queue.push(child);
      }
    }
  }
  return found;
}

/** Running or sleeping: an exited process not yet reaped (a zombie) holds nothing. */
const alive = (pid: number) => {
  const state = processTable().get(pid)?.state;
  return state !== undefined && state !== "Z" && state !== "X";
};

let demo: Child | undefined;
/** The demo's processes, recorded before it is stopped. */
let recorded: number[] = [];

/** Where the demo's Node processes write any attempt to reach beyond this machine (none is let through). */
const networkLog = join(mkdtempSync(join(tmpdir(), "demo-network-")), "attempts.log");

beforeAll(async () => {
  const env: NodeJS.ProcessEnv = {
    PORT: String(await freePort()),
    DATABASE_URL: undefined,
    // No internet: every Node process the demo starts (npm, tsx, the launcher, Ponder) refuses
    // connections and name lookups beyond loopback, and records them. npm's own update check is off.
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --require ${join(ROOT, "test/helpers/no-network.cjs")}`.trim(),
    NO_NETWORK_LOG: networkLog,
    npm_config_update_notifier: "false",
  };
  for (const name of Object.keys(process.env)) if (name.startsWith("PONDER_RPC_URL_")) env[name] = undefined;
  demo = new Child("npm", ["run", "demo"], env);
  await waitFor(
    "the demo's examples",
    async () => {
      if (!demo!.running)
        throw new GiveUp(`the demo exited (code ${demo!.process.exitCode})\n${demo!.output.slice(-5000)}`);
      return demo!.output.includes("Ctrl-C stops everything") ? true : undefined;
    },
    300_000,
  ).catch((error: Error) => {
    throw new Error(`${error.message}\n--- demo output ---\n${demo!.output.slice(-5000)}`);
  });
});

afterAll(async () => {
  // Even when a test failed: stop the demo's group, then whatever it left.
  if (demo?.running) recorded.push(...descendants(demo.process.pid!));
  await demo?.stop();
  for (const pid of recorded) {
    if (alive(pid)) process.kill(pid, "SIGKILL");
  }
});

describe("npm run demo", () => {
  it("needs no network: none of its Node processes tried to reach beyond this machine", () => {
    expect(existsSync(networkLog) ? readFileSync(networkLog, "utf8") : "").toBe("");
  });

  it("prints ready-to-paste requests, and each answers what it printed", async () => {
    const printed = examples(demo!.output);
    const paths = printed.map((e) => new URL(e.url).pathname);
    // What the examples must cover.
    for (const path of ["/registry/v2/check/all", "/registry/v2/check/erc20", "/registry/chains"])
      expect(paths).toContain(path);
    expect(
      paths.some((p) => p.startsWith("/registry/v1/check/")),
      "a v1 check",
    ).toBe(true);
    expect(
      printed.some((e) => e.length && /^\/registry\/v2\/0x/.test(new URL(e.url).pathname) && Number(e.answer) >= 100),
      "a v2 listing of hundreds",
    ).toBe(true);
    expect(
      printed.some((e) => e.length && /^\/registry\/v1\/0x/.test(new URL(e.url).pathname)),
      "a v1 listing",
    ).toBe(true);
    expect(
      printed.some((e) => /\/check\//.test(e.url) && e.answer === "false"),
      "a check that answers false",
    ).toBe(true);

    for (const e of printed) {
      const res = await fetch(e.url);
      const body = await res.text();
      expect(res.status, `${e.url}: ${body}`).toBe(200);
      const got = e.length ? String((JSON.parse(body) as unknown[]).length) : body;
      expect(got, e.url).toBe(e.answer);
    }
  });

  it("Ctrl-C stops every process it started, frees the port and removes its temporary directory", async () => {
    const port = new URL(examples(demo!.output)[0]!.url).port;
    const dir = /its data in (\S+)…/.exec(demo!.output)?.[1];
    expect(dir, "the demo names its temporary directory").toBeDefined();
    expect(existsSync(dir!)).toBe(true);
    recorded = descendants(demo!.process.pid!);
    // npm, the demo, anvil, the launcher and Ponder at least.
    expect(recorded.length).toBeGreaterThanOrEqual(4);

    process.kill(-demo!.process.pid!, "SIGINT");
    await waitFor("the demo to exit", async () => (demo!.running ? undefined : true), 60_000);
    // npm runs the script through sh, which ends itself with the SIGINT it got once the demo has
    // exited (as every npm script does on Ctrl-C): the demo's own clean end is its last line.
    expect(
      demo!.process.exitCode === 0 || demo!.process.signalCode === "SIGINT",
      `npm ended with ${demo!.process.exitCode ?? demo!.process.signalCode}`,
    ).toBe(true);
    expect(demo!.output.trimEnd(), demo!.output.slice(-3000)).toMatch(
      /\[demo\] stopped: the chain and the service have exited, \S+ is removed$/,
    );
    expect(recorded.filter(alive), "processes left running").toEqual([]);
    await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
    expect(existsSync(dir!), `${dir} is left`).toBe(false);
  });
});
