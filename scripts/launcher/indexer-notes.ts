/**
 * The launcher's notes of each chain's indexer where chains are indexed apart, for every API process
 * to tell operators (api/watch/chain-indexers.ts): written when they change, never blocking the
 * chain's loop (a database that fails is written to again at the next change or probe).
 */
import type { AccessDb } from "../../api/database/db";
import { type IndexerActivity, noteIndexer } from "../../api/watch/chain-indexers";
import type { ConfiguredChain } from "../../core/settings";
import { urlRedactor } from "../../core/url";
import { type PonderBackfill, ponderBackfillOf } from "../../ponder/ponder-0.16.10";
import { whyChainUnreachable } from "./rpc";

/** How often a running chain's RPC is asked whether it answers: its failure is told within this long. */
export const RPC_PROBE_MS = 15_000;
/** How often a backfilling chain's progress is read from its Ponder's /metrics. */
export const BACKFILL_READ_MS = 5_000;

/** One chain's notes: its indexer's state, and since when its RPC has not answered. */
export class IndexerNotes {
  private state: IndexerActivity = "waiting";
  private detail: string | null = null;
  private rpcFailingSince: string | null = null;
  private backfill: PonderBackfill | null = null;
  private written = "";
  private probe: NodeJS.Timeout | undefined;
  private progress: NodeJS.Timeout | undefined;
  private readonly redact: (text: string) => string;

  constructor(
    private readonly db: AccessDb,
    private readonly accessSchema: string,
    private readonly indexerSchema: string,
    private readonly configured: ConfiguredChain,
  ) {
    this.redact = urlRedactor(configured.rpc);
  }

  /** The indexer's state now, why (waiting, restarting), and whether its RPC was just found to answer. */
  note(state: IndexerActivity, detail: string | null = null, rpcAnswers?: boolean): void {
    this.state = state;
    this.detail = detail === null ? null : this.redact(detail);
    if (rpcAnswers !== undefined) this.rpcAnswered(rpcAnswers);
    this.write();
  }

  /**
   * While its Ponder runs (its /metrics on `ponderPort`), its RPC is asked every RPC_PROBE_MS, and its
   * backfill progress read every BACKFILL_READ_MS until it is live; `false` stops both.
   */
  probing(on: boolean, ponderPort?: number): void {
    clearInterval(this.probe);
    this.probe = undefined;
    clearInterval(this.progress);
    this.progress = undefined;
    this.backfill = null;
    if (!on) return;
    if (ponderPort !== undefined) this.readProgress(ponderPort);
    this.probe = setInterval(async () => {
      const reasons = await whyChainUnreachable(this.configured).catch((error: Error) => [error.message]);
      this.rpcAnswered(reasons.length === 0);
      this.write();
    }, RPC_PROBE_MS);
    this.probe.unref();
  }

  private readProgress(port: number): void {
    const progress = setInterval(async () => {
      const metrics = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(4_000) })
        .then((res) => (res.ok ? res.text() : undefined))
        .catch(() => undefined);
      const backfill = metrics === undefined ? undefined : ponderBackfillOf(metrics, this.configured.chain.name);
      if (progress !== this.progress || backfill === undefined) return;
      if (backfill === "live") clearInterval(progress);
      this.backfill = backfill === "live" ? null : backfill;
      this.write();
    }, BACKFILL_READ_MS);
    progress.unref();
    this.progress = progress;
  }

  private rpcAnswered(answers: boolean): void {
    if (answers) this.rpcFailingSince = null;
    else this.rpcFailingSince ??= new Date().toISOString();
  }

  private write(): void {
    const note = {
      indexerSchema: this.indexerSchema,
      chainId: this.configured.chain.id,
      state: this.state,
      rpcFailingSince: this.rpcFailingSince,
      detail: this.detail,
      backfill: this.backfill,
    };
    const key = JSON.stringify(note);
    if (key === this.written) return;
    this.written = key;
    noteIndexer(this.db, this.accessSchema, note).catch(() => {
      this.written = "";
    });
  }
}
