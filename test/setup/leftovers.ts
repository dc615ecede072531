/**
 * After each test file, what it started and did not stop is killed (devkit/processes.ts,
 * killUnstopped) and named: a file whose setup failed part way (a service that did not start after
 * its chain did) would otherwise leave its chains running beside the next files, and past the run.
 */
import { afterAll } from "vitest";
import { killUnstopped } from "../../devkit/processes";

afterAll(() => {
  const left = killUnstopped();
  if (left.length > 0) console.warn(`[leftovers] killed what the file left running:\n${left.join("\n")}`);
});
