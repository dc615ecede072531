/**
 * The README's commands exactly as a newcomer runs them: a fresh `git clone` of this repository's
 * HEAD (its node_modules linked, as `npm install` would make them), none of the service's variables
 * set, and no network beyond this machine (every Node process refuses, and records, any other
 * connection or name lookup). It also shows that every default path the service writes is made with
 * its parents on first use, which no test that sets its own paths can show.
 *
 * 1. `npm start` with no RPC configured: it stays up, `/health` 200, a check `503 chain_syncing`, and
 *    its log names the unreachable RPC and the fix.
 * 2. `npm start` with only PONDER_RPC_URL_31337 (a local anvil with the real registries): ready, a
 *    check answers as the contract does; Ctrl-C, and the same command again resumes from its data.
 * 3. `npm run demo`: every request it prints answers what it says; it needs no network; Ctrl-C stops
 *    everything it started and removes its temporary directory.
 *
 * The service's default port (42069) is used, as the README's commands do: no other test uses it.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { type Address, encodeFunctionData, zeroHash } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Anvil, startAnvil } from "../devkit/anvil";
import { ask } from "../devkit/ask";
import { abis, addresses, installRegistries } from "../devkit/oracle";
import { Child, GiveUp, ROOT, waitFor } from "../devkit/processes";
import { callView } from "../devkit/rpc";
import { sendTx } from "../devkit/send";
import { SNIPPET_HEADING } from "../scripts/demo/examples";

/** The service's variables (README, Configuration): a newcomer has set none of them. */
const SERVICE_VARIABLES = [
  "DATABASE_URL",
  "ACCESS_DATABASE_URL",
  "REPLICA_DATABASE_URL",
  "REPLICA_ACCESS_DATABASE_URL",
  "DATABASE_SCHEMA",
  "DATABASE_VIEWS_SCHEMA",
  "PGLITE_DIR",
  "START_BLOCKS_FILE",
  "PORT",
  "ADMIN_TOKEN",
  "TRUSTED_PROXY",
  "ACCESS_SCHEMA",
  "BEHIND_AFTER_SECONDS",
  "REORG_CHECK_SECONDS",
  "API_WORKERS",
  "HOST",
  "SERVICE_URL",
  "PONDER_TELEMETRY_DISABLED",
];
const SERVICE = "http://127.0.0.1:42069";

let clone: string;
/** Where the Node processes write any attempt to reach beyond this machine (none is let through). */
const networkLog = join(mkdtempSync(join(tmpdir(), "fresh-clone-network-")), "attempts.log");

/** The environment of a newcomer's shell: none of the service's variables, no network, plus `extra`. */
function newcomer(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    // No internet: every Node process (npm, tsx, the launcher, Ponder) refuses connections and name
    // lookups beyond loopback, and records them. npm's own update check is off.
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --require ${join(ROOT, "test/helpers/no-network.cjs")}`.trim(),
    NO_NETWORK_LOG: networkLog,
    npm_config_update_notifier: "false",
  };
  for (const name of Object.keys(process.env)) {
    if (name.startsWith("PONDER_RPC_URL_") || SERVICE_VARIABLES.includes(name)) env[name] = undefined;
  }
  return { ...env, ...extra };
}

/** Records of network attempts so far, and forgets them. */
function takeNetworkAttempts(): string {
  const text = existsSync(networkLog) ? readFileSync(networkLog, "utf8") : "";
  rmSync(networkLog, { force: true });
  return text;
}

/** Sends Ctrl-C (SIGINT to its process group, as a terminal does) and waits until the whole group is gone. */
async function ctrlC(child: Child): Promise<void> {
  try {
    process.kill(-child.process.pid!, "SIGINT");
  } catch (error) {
    // Its group already gone (it exited by itself): said by the test's own failure, which a throw
    // here, in its `finally`, would hide.
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
  await waitFor("the command to exit", async () => (child.running ? undefined : true), 60_000);
  await child.stop();
}

/** The tracked files the clone's commands changed or added outside .gitignore: none may be. */
const dirtied = () => execFileSync("git", ["status", "--porcelain"], { cwd: clone, encoding: "utf8" }).trim();

beforeAll(() => {
  const parent = mkdtempSync(join(tmpdir(), "fresh-clone-"));
  clone = join(parent, "delegation-lookup");
  execFileSync("git", ["clone", "--quiet", ROOT, clone]);
  symlinkSync(join(ROOT, "node_modules"), join(clone, "node_modules"));
});

afterAll(() => {
  if (clone) rmSync(join(clone, ".."), { recursive: true, force: true });
  rmSync(dirname(networkLog), { recursive: true, force: true });
});

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

describe("npm start in a fresh clone, with nothing set", () => {
  const CHECK =
    "/registry/v2/check/all?to=0x70997970C51812dc3A010C7d01b50e0d17dc79C8" +
    "&from=0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";

  it("stays up: /health 200, a check 503 chain_syncing, the log names the unreachable RPC and the fix", async () => {
    const start = new Child("npm", ["start"], newcomer(), clone);
    try {
      await waitFor(
        "npm start to answer on port 42069",
        async () => {
          if (!start.running) throw new GiveUp(`npm start exited (${start.process.exitCode})\n${start.output}`);
          return (await fetch(`${SERVICE}/health`)).status === 200 ? true : undefined;
        },
        120_000,
      );
      const check = await ask(SERVICE, CHECK, { reask: false });
      expect(check.status).toBe(503);
      expect(check.headers.get("content-type")).toBe("application/problem+json");
      expect((JSON.parse(check.text) as { code: string }).code).toBe("chain_syncing");
      const log = await waitFor("the log line naming the RPC", async () => {
        const text = stripVTControlCharacters(start.output);
        return /cannot reach its RPC/.test(text) ? text : undefined;
      });
      expect(log).toMatch(/chain 1 \(Ethereum\): cannot reach its RPC \(https?:\/\/\S+: [^)]+\)/);
      expect(log).toMatch(/Fix: set PONDER_RPC_URL_1=<a reachable RPC URL>/);
      expect(log).not.toMatch(/set PORT/);
      // It keeps trying, and keeps answering.
      await new Promise((ok) => setTimeout(ok, 3_000));
      expect(start.running, start.output).toBe(true);
      expect((await fetch(`${SERVICE}/health`)).status).toBe(200);
      expect(existsSync(join(clone, ".ponder/pglite-access")), "the keys' database, made with its parents").toBe(true);
    } finally {
      await ctrlC(start);
    }
    expect(dirtied(), "files the service wrote outside .gitignore").toBe("");
    takeNetworkAttempts();
  });

  describe("with only PONDER_RPC_URL_31337 set, to a local chain with the registries", () => {
    let anvil: Anvil;
    /** The block of the delegation written before the service starts. */
    let written: bigint;
    const [vault, hot] = [
      "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
      "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
    ] as Address[];

    beforeAll(async () => {
      anvil = await startAnvil();
      await installRegistries(anvil.url);
      const data = encodeFunctionData({ abi: abis.v2, functionName: "delegateAll", args: [hot, zeroHash, true] });
      ({ block: written } = await sendTx(anvil.url, vault!, addresses.v2.address, data));
    });
    afterAll(async () => {
      await anvil?.stop();
    });

    /** `npm start` until it is ready; its check of the delegation, with the block it reports. */
    async function startAndCheck(): Promise<{ start: Child; body: string; block: bigint }> {
      const start = new Child("npm", ["start"], newcomer({ PONDER_RPC_URL_31337: anvil.url }), clone);
      await waitFor(
        "npm start to be ready",
        async () => {
          if (!start.running) throw new GiveUp(`npm start exited (${start.process.exitCode})\n${start.output}`);
          return (await fetch(`${SERVICE}/ready`)).status === 200 ? true : undefined;
        },
        240_000,
      ).catch(async (error: Error) => {
        await start.stop();
        throw new Error(`${error.message}\n--- npm start ---\n${start.output.slice(-5000)}`);
      });
      // Ready before the chain reached the delegation's block (a new chain is indexed live): wait for it.
      return waitFor("the delegation's block to be indexed", async () => {
        const res = await ask(SERVICE, `/registry/v2/check/all?chainId=31337&to=${hot}&from=${vault}`, {
          reask: false,
        });
        const block = BigInt(res.headers.get("x-indexed-block") ?? "-1");
        return block >= written ? { start, body: res.text, block } : undefined;
      });
    }

    it("is ready, answers a check as the contract does; after Ctrl-C the same command resumes its data", async () => {
      const first = await startAndCheck();
      try {
        const want = await callView(
          anvil.url,
          abis.v2,
          addresses.v2.address,
          "checkDelegateForAll",
          [hot, vault, zeroHash],
          first.block,
        );
        expect(first.body).toBe(String(want));
        expect(first.body).toBe("true");
      } finally {
        await ctrlC(first.start);
      }
      for (const path of [".ponder/pglite", ".ponder/pglite-access", ".ponder/start-blocks.json"])
        expect(existsSync(join(clone, path)), `${path}, written by default`).toBe(true);

      const again = await startAndCheck();
      try {
        expect(again.body).toBe("true");
        const log = stripVTControlCharacters(again.start.output);
        // Its data is its own from before: the start blocks it found are remembered, not searched
        // again, and Ponder resumes the schema rather than indexing it anew.
        expect(log).not.toMatch(/was deployed in block/);
        expect(log).toMatch(/Detected crash recovery .*schema=delegations/);
      } finally {
        await ctrlC(again.start);
      }
      expect(dirtied(), "files the service wrote outside .gitignore").toBe("");
      takeNetworkAttempts();
    });
  });
});

describe("npm run demo in a fresh clone", () => {
  let demo: Child | undefined;
  /** The demo's processes, recorded before it is stopped. */
  let recorded: number[] = [];

  beforeAll(async () => {
    takeNetworkAttempts();
    demo = new Child("npm", ["run", "demo"], newcomer(), clone);
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

  it("needs no network: none of its Node processes tried to reach beyond this machine", () => {
    expect(takeNetworkAttempts()).toBe("");
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
      const url = new URL(e.url);
      const res = await ask(url.origin, url.pathname + url.search, { reask: false });
      const body = res.text;
      expect(res.status, `${e.url}: ${body}`).toBe(200);
      const got = e.length ? String((JSON.parse(body) as unknown[]).length) : body;
      expect(got, e.url).toBe(e.answer);
    }
  });

  it("prints a snippet of the typed client that, saved and run as it says, prints the answer it shows", () => {
    const output = stripVTControlCharacters(demo!.output);
    const at = output.indexOf(SNIPPET_HEADING);
    expect(at, "the demo prints the typed client's snippet").toBeGreaterThan(-1);
    const lines = output.slice(at).split("\n").slice(2);
    const code = lines.slice(0, lines.findIndex((line) => line.trim().startsWith("console.log")) + 1);
    const answer = /\/\/ → (.*)$/.exec(code.at(-1) ?? "")?.[1];
    expect(answer, code.join("\n")).toMatch(/^(true|false)$/);
    writeFileSync(join(clone, "try.ts"), code.map((line) => line.trim()).join("\n"));
    const env = { ...process.env, ...newcomer() };
    const printed = execFileSync("npx", ["tsx", "try.ts"], { cwd: clone, env, encoding: "utf8" });
    expect(printed.trim()).toBe(answer);
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
    // npm may end before the demo's last line (once seen: its output ended at "stopping…"): the
    // output is whole once every process that holds it has closed it.
    await waitFor("the demo's output to close", async () => demo!.process.stdout!.closed || undefined, 30_000);
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
