/**
 * Everything the bench starts or creates is undone: each start registers its undo step here, a
 * scope undoes its own steps when it ends, and Ctrl-C or SIGTERM undoes all of them before exiting.
 */
export class Cleanup {
  private readonly steps: { what: string; undo: () => Promise<unknown> }[] = [];

  constructor() {
    let stopping = false;
    for (const signal of ["SIGINT", "SIGTERM"] as const) {
      process.on(signal, () => {
        // Ctrl-C of `npm run bench` arrives twice, from the terminal and relayed a moment later (by
        // npm or tsx): dying of the second halfway through would leave the rest running, since
        // devkit/processes.ts kills what is left on exit, which a death by signal skips. Each step
        // is bounded (Child.stop kills after 10 s).
        if (stopping) return;
        stopping = true;
        console.error(`\n${signal}: stopping what the bench started…`);
        void this.unwind(0).finally(() => process.exit(130));
      });
    }
  }

  add(what: string, undo: () => Promise<unknown>): void {
    this.steps.push({ what, undo });
  }

  /** Runs `work`, then undoes whatever it registered, even when it fails. */
  async scope<T>(work: () => Promise<T>): Promise<T> {
    const mark = this.steps.length;
    try {
      return await work();
    } finally {
      await this.unwind(mark);
    }
  }

  async all(): Promise<void> {
    await this.unwind(0);
  }

  private async unwind(mark: number): Promise<void> {
    while (this.steps.length > mark) {
      const step = this.steps.pop()!;
      await step.undo().catch((error: Error) => console.error(`cleanup (${step.what}): ${error.message}`));
    }
  }
}
