import { expect, it } from "vitest";
import { Child, killUnstopped, runNpm } from "./processes";

// runNpm past its bound: bench/cleanup.test.ts, with the bench stand-in it interrupts.

it("runNpm gives npm's exit code and all it printed, past Child's own tail", async () => {
  const script = 'console.log("first"); console.log("x".repeat(300000)); console.log("last"); process.exitCode = 3';
  const { code, output } = await runNpm(["exec", "--", "node", "-e", script], 30_000);
  expect(code).toBe(3);
  expect(output.length).toBeGreaterThan(300_000);
  expect(output.startsWith("first\n"), output.slice(0, 200)).toBe(true);
  expect(output.trimEnd().endsWith("last"), output.slice(-200)).toBe(true);
}, 60_000);

it("killUnstopped kills and names each group left running, and only those", async () => {
  const left = new Child("sh", ["-c", "sleep 60 & sleep 60"]);
  const stopped = new Child("sleep", ["60"]);
  await stopped.stop();
  // Never stopped, but ended by itself: not left.
  const ended = new Child("true", []);
  await new Promise((ok) => ended.process.once("exit", ok));
  for (let waited = 0; ended.groupAlive && waited < 5_000; waited += 50) await new Promise((ok) => setTimeout(ok, 50));
  expect(killUnstopped()).toEqual(["sh -c sleep 60 & sleep 60"]);
  // The whole group: the shell and the sleep it started.
  for (let waited = 0; left.groupAlive && waited < 5_000; waited += 50) await new Promise((ok) => setTimeout(ok, 50));
  expect(left.groupAlive).toBe(false);
  expect(killUnstopped()).toEqual([]);
});
