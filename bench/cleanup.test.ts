import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { BIN, ROOT, signalGroup, waitFor } from "../devkit/processes";

const groupAlive = (group: number) => signalGroup(group, 0);

const left: number[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const group of left.splice(0)) signalGroup(group, "SIGKILL");
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * A bench stand-in: Cleanup's signal handlers, and a child started but not yet registered with it
 * (as startServe's replica while it waits to be ready), its group printed.
 */
function benchInterruptedWhileStarting(): Promise<{ code: number | null; group: number }> {
  const dir = mkdtempSync(join(tmpdir(), "bench-cleanup-"));
  dirs.push(dir);
  const script = join(dir, "bench.ts");
  writeFileSync(
    script,
    [
      `import { Child } from ${JSON.stringify(join(ROOT, "devkit/processes.ts"))};`,
      `import { Cleanup } from ${JSON.stringify(join(ROOT, "bench/cleanup.ts"))};`,
      "new Cleanup();",
      'const child = new Child("sleep", ["600"]);',
      'console.log("group " + child.process.pid);',
      "setInterval(() => {}, 1_000);",
    ].join("\n"),
  );
  const bench = spawn(join(BIN, "tsx"), [script], { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
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
    bench.kill("SIGINT");
    return { code: await exited, group };
  });
}

it("Ctrl-C stops a child the bench had not yet registered for cleanup", async () => {
  const { code, group } = await benchInterruptedWhileStarting();
  expect(code).toBe(130);
  // Killed on the way out; gone once reaped (unstopped, `sleep 600` would outlive the test).
  await waitFor("the child's group to be gone", async () => (groupAlive(group) ? undefined : true), 5_000);
});
