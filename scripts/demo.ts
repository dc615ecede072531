/**
 * `npm run demo`: the service on a local chain, with no internet. Starts anvil, puts stand-ins for
 * the registries at their addresses (scripts/demo/StandIns.sol), writes a seeded history of
 * thousands of delegations, runs the service on it as `npm start` does, prints requests to try with
 * their answers, and keeps writing a little until Ctrl-C, which stops everything it started.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { demoSettings, settingsOrExit } from "../core/settings";
import type { Anvil } from "../devkit/anvil";
import { Activity, PEOPLE } from "./demo/activity";
import { compileStandIns, finalize, Sender, startDemoChain } from "./demo/chain";
import { chooseExamples, clientSnippet, examplesText } from "./demo/examples";
import { DemoModel } from "./demo/model";
import { DemoService } from "./demo/service";

const LIVE_EVERY_MS = 3_000;

const log = (message: string) => console.log(`[demo] ${message}`);
const settings = settingsOrExit(() => demoSettings(process.env));
let dir: string | undefined;
let chain: Promise<Anvil> | undefined;
let service: DemoService | undefined;
let stopping: Promise<never> | undefined;

/** Stops the service and the chain (their whole process groups), removes the temp directory, exits. */
function shutdown(code: number): Promise<never> {
  stopping ??= (async () => {
    log("stopping…");
    await service?.child.stop();
    await (await chain?.catch(() => undefined))?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    log(
      code === 0
        ? `stopped: the chain and the service have exited${dir ? `, ${dir} is removed` : ""}`
        : "stopped after the error above",
    );
    process.exit(code);
  })();
  return stopping;
}
// SIGHUP: the terminal was closed.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => void shutdown(0));

async function main() {
  if (settings.ignoresDatabaseUrl)
    log(
      "DATABASE_URL is ignored: the demo's chain is new every run, so it uses a fresh PGlite database in a temporary " +
        "directory",
    );
  const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;

  // The long computations come first, before anything is started: when Ctrl-C finds the demo busy
  // for more than a few tens of milliseconds, tsx (npm run demo) kills it outright, and what it had
  // started would be left running.
  const standIns = compileStandIns();
  const activity = new Activity();
  const rounds = activity.history();
  const history = rounds.flat();
  const model = new DemoModel();
  // Each round is mined before the next; within one, a sender's writes run in order and only touch
  // its own delegations, except v1 revokeSelf, alone in its round, whose counter bumps commute.
  model.apply(history);
  const examples = chooseExamples(model, history);
  const sender = new Sender();
  const batches = rounds.map((round) => sender.prepare(round));

  const writing = Date.now();
  dir = mkdtempSync(join(tmpdir(), "delegation-demo-"));
  chain = startDemoChain(standIns);
  const anvil = await chain;
  log(`local chain at ${anvil.url} (chain 31337), stand-in registries installed; writing the history…`);
  for (const batch of batches) await sender.send(anvil.url, batch);
  const written = await finalize(anvil.url);
  const v2 = model.v2Delegations();
  log(
    `wrote ${history.length} transactions among ${PEOPLE.length} wallets in ${seconds(writing)}: ` +
      `${history.reduce((n, tx) => n + ("v2" in tx ? tx.v2.length : 0), 0)} v2 writes (${v2.length} delegations, ` +
      `${v2.filter((e) => e.value > 0n).length} in force) and ${history.filter((tx) => "v1" in tx).length} v1 writes ` +
      `(${model.v1InForce().length} delegations in force)`,
  );

  log(`starting the service (scripts/start.ts, as npm start runs it), its data in ${dir}…`);
  service = new DemoService(anvil.url, dir, settings.port);
  const url = await service.ready(written);
  log(`the service is ready at ${url}, ${seconds(writing)} after the chain started`);
  service.quiet = true;
  process.stdout.write(examplesText(url, examples));
  process.stdout.write(clientSnippet(url, examples.find((e) => e.path.startsWith("/registry/v2/check/all"))!));
  log(
    `writing a few delegations every ${LIVE_EVERY_MS / 1000} s (never on the wallets above). Ctrl-C stops everything.`,
  );

  const shown = new Set(examples.flatMap((e) => e.wallets.map((w) => w.toLowerCase())));
  const live = PEOPLE.filter((p) => !shown.has(p.toLowerCase()));
  for (;;) {
    await new Promise((ok) => setTimeout(ok, LIVE_EVERY_MS));
    if (!service.child.running)
      throw new Error(`the service exited (code ${service.child.process.exitCode}); its output is above`);
    await sender.send(anvil.url, sender.prepare(activity.live(live)));
  }
}

main().catch((error: Error) => {
  if (stopping) return;
  console.error(`[demo] ${error.message}`);
  void shutdown(1);
});
