import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { ROOT, runNpm, signalGroup } from "./processes";

const left: number[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const group of left.splice(0)) signalGroup(group, "SIGKILL");
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

it("runNpm interrupts npm past its bound, and what the script started is stopped with it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "run-npm-"));
  dirs.push(dir);
  const script = join(dir, "hangs.ts");
  // A bench stand-in that never ends: a child registered for cleanup, as the bench's deployments are.
  writeFileSync(
    script,
    [
      `import { Child } from ${JSON.stringify(join(ROOT, "devkit/processes.ts"))};`,
      `import { Cleanup } from ${JSON.stringify(join(ROOT, "bench/cleanup.ts"))};`,
      "const cleanup = new Cleanup();",
      'const child = new Child("sleep", ["600"]);',
      'cleanup.add("sleep", () => child.stop());',
      'console.log("group " + child.process.pid);',
      "setInterval(() => {}, 1_000);",
    ].join("\n"),
  );
  const started = Date.now();
  const { code, output } = await runNpm(["exec", "--", "tsx", script], 4_000);
  const group = Number(/group (\d+)/.exec(output)?.[1]);
  left.push(group);
  expect(group, output).toBeGreaterThan(0);
  expect(code).not.toBe(0);
  expect(output).toContain("had not ended after 4 s: interrupted");
  // Interrupted, not killed a minute later: the stand-in's own cleanup ran.
  expect(Date.now() - started).toBeLessThan(30_000);
  expect(output).toContain("stopping what the bench started");
  expect(signalGroup(group, 0), "the script's child still running").toBe(false);
}, 60_000);

it("runNpm gives npm's exit code and all it printed, past Child's own tail", async () => {
  const script = 'console.log("first"); console.log("x".repeat(300000)); console.log("last"); process.exitCode = 3';
  const { code, output } = await runNpm(["exec", "--", "node", "-e", script], 30_000);
  expect(code).toBe(3);
  expect(output.length).toBeGreaterThan(300_000);
  expect(output.startsWith("first\n"), output.slice(0, 200)).toBe(true);
  expect(output.trimEnd().endsWith("last"), output.slice(-200)).toBe(true);
}, 60_000);
