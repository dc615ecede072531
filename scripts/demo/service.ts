/** The service, run on the demo's chain as `npm start` runs it, its output passed through. */
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { Child, GiveUp, waitFor } from "../../devkit/processes";

/** Ponder's log lines below warnings (one a block once live); anything else, stack traces too, is shown. */
const ROUTINE = /^\d\d:\d\d:\d\d\.\d{3} (INFO|DEBUG|TRACE) /;

/**
 * `scripts/start.ts` on the demo's chain, as npm start runs it (scripts/bundle.mjs), its data in the
 * demo's directory; routine lines hidden once quiet.
 */
export class DemoService {
  readonly child: Child;
  /** Once the examples are out: Ponder's routine lines would scroll them away. */
  quiet = false;

  constructor(rpcUrl: string, dir: string, port: number) {
    const env: NodeJS.ProcessEnv = {
      PONDER_RPC_URL_31337: rpcUrl,
      // The demo's chain is new every run: a database of an earlier run (or of real chains) must not be used.
      DATABASE_URL: undefined,
      PGLITE_DIR: join(dir, "pglite"),
      START_BLOCKS_FILE: join(dir, "start-blocks.json"),
      PONDER_TELEMETRY_DISABLED: "true",
      PORT: String(port),
    };
    // Only the demo's chain: undefined leaves the variable out of the child's environment.
    for (const name of Object.keys(process.env)) {
      if (name.startsWith("PONDER_RPC_URL_") && !(name in env)) env[name] = undefined;
    }
    this.child = new Child(process.execPath, ["scripts/bundle.mjs", "start", "--run"], env);
    let partial = "";
    this.child.process.stdout!.on("data", (chunk: Buffer) => {
      const lines = (partial + chunk.toString()).split("\n");
      partial = lines.pop()!;
      for (const line of lines)
        if (!(this.quiet && ROUTINE.test(stripVTControlCharacters(line)))) process.stdout.write(`${line}\n`);
    });
    this.child.process.stderr!.on("data", (chunk: Buffer) => process.stderr.write(chunk));
  }

  /**
   * The service's URL once /ready answers 200 and its answers reflect `block`, on the port Ponder
   * took (another when the one asked is busy). Ponder is ready once it has indexed up to the
   * chain's finalized block, and takes the newer blocks live after.
   */
  async ready(block: bigint): Promise<string> {
    const running = () => {
      if (!this.child.running)
        throw new GiveUp(`the service exited (code ${this.child.process.exitCode}); its output is above`);
    };
    const port = await waitFor(
      "the service's HTTP server",
      async () => {
        running();
        return /Created HTTP server port=(\d+)/.exec(stripVTControlCharacters(this.child.output))?.[1];
      },
      300_000,
    );
    const url = `http://127.0.0.1:${port}`;
    await waitFor(
      "the service to be ready",
      async () => {
        running();
        if ((await fetch(`${url}/ready`)).status !== 200) return undefined;
        const status = (await (await fetch(`${url}/status`)).json()) as Record<
          string,
          { id: number; block: { number: number } }
        >;
        const indexed = Object.values(status).find((chain) => chain.id === 31337)?.block.number;
        return indexed !== undefined && BigInt(indexed) >= block ? true : undefined;
      },
      300_000,
    );
    return url;
  }
}
