import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { BIN, ROOT, runNpm, signalGroup, waitFor } from "../devkit/processes";

const groupAlive = (group: number) => signalGroup(group, 0);

const left: number[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const group of left.splice(0)) signalGroup(group, "SIGKILL");
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * A bench stand-in: Cleanup's signal handlers, a step whose undo takes a second (as stopping an
 * indexer does: a signal relayed meanwhile lands halfway), and a child started but not yet
 * registered with it (as startServe's replica while it waits to be ready), its group printed.
 */
function standIn(): { dir: string; script: string } {
  const dir = mkdtempSync(join(tmpdir(), "bench-cleanup-"));
  dirs.push(dir);
  const script = join(dir, "bench.ts");
  writeFileSync(
    script,
    [
      `import { Child } from ${JSON.stringify(join(ROOT, "devkit/processes.ts"))};`,
      `import { Cleanup } from ${JSON.stringify(join(ROOT, "bench/cleanup.ts"))};`,
      "const cleanup = new Cleanup();",
      'cleanup.add("a slow stop", () => new Promise((ok) => setTimeout(ok, 1_000)));',
      'const child = new Child("sleep", ["600"]);',
      'console.log("group " + child.process.pid);',
      "setInterval(() => {}, 1_000);",
    ].join("\n"),
  );
  return { dir, script };
}

/** The stand-in, interrupted once it has started its child. */
function benchInterruptedWhileStarting(
  interrupt: "SIGINT to the bench" | "Ctrl-C of npm run bench",
): Promise<{ code: number | null; group: number }> {
  const { dir, script } = standIn();
  // npm run in a process group of its own, as a terminal runs it: Ctrl-C signals the whole group.
  writeFileSync(join(dir, "package.json"), JSON.stringify({ scripts: { bench: `${join(BIN, "tsx")} bench.ts` } }));
  const viaNpm = interrupt === "Ctrl-C of npm run bench";
  const bench = viaNpm
    ? spawn("npm", ["run", "--silent", "bench"], { cwd: dir, detached: true, stdio: ["ignore", "pipe", "inherit"] })
    : spawn(join(BIN, "tsx"), [script], { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
  let output = "";
  bench.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((ok) => bench.once("exit", (code) => ok(code)));
  return waitFor("the stand-in to start its child", async () => {
    const group = /group (\d+)/.exec(output)?.[1];
    return group === undefined ? undefined : Number(group);
  }).then(async (group) => {
    left.push(group);
    expect(groupAlive(group)).toBe(true);
    if (viaNpm) {
      left.push(bench.pid!);
      signalGroup(bench.pid!, "SIGINT");
    } else bench.kill("SIGINT");
    return { code: await exited, group };
  });
}

it.each(["SIGINT to the bench", "Ctrl-C of npm run bench"] as const)(
  "%s stops a child the bench had not yet registered for cleanup",
  async (interrupt) => {
    const { code, group } = await benchInterruptedWhileStarting(interrupt);
    // npm's own exit code is npm's; the bench's is 130.
    if (interrupt === "SIGINT to the bench") expect(code).toBe(130);
    // Killed on the way out; gone once reaped (unstopped, `sleep 600` would outlive the test).
    await waitFor("the child's group to be gone", async () => (groupAlive(group) ? undefined : true), 5_000);
  },
);

it("runNpm's bound interrupts npm as Ctrl-C does: the bench stops what it started", async () => {
  const started = Date.now();
  const { code, output } = await runNpm(["exec", "--", "tsx", standIn().script], 4_000);
  const group = Number(/group (\d+)/.exec(output)?.[1]);
  expect(group, output).toBeGreaterThan(0);
  left.push(group);
  expect(code).not.toBe(0);
  expect(output).toContain("had not ended after 4 s: interrupted");
  // Its own Cleanup ran (not the kill a minute after the bound), and its child is gone.
  expect(output).toContain("stopping what the bench started");
  expect(Date.now() - started).toBeLessThan(30_000);
  await waitFor("the child's group to be gone", async () => (groupAlive(group) ? undefined : true), 5_000);
});
