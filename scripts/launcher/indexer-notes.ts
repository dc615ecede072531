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
  private readonly redact: (text: string) => string;

  constructor(
    private readonly db: AccessDb,
    private readonly accessSchema: string,
    private readonly indexerSchema: string,
    private readonly configured: ConfiguredChain,
  ) {
    this.redact = urlRedactor(configured.rpc);
  }

  /** Ponder's name of the chain (its metrics' `chain` label). */
  get chainName(): string {
    return this.configured.chain.name;
  }

  /** The indexer's state now, why (waiting, restarting), and whether its RPC was just found to answer. */
  note(state: IndexerActivity, detail: string | null = null, rpcAnswers?: boolean): void {
    this.state = state;
    this.detail = detail === null ? null : this.redact(detail);
    if (rpcAnswers !== undefined) this.rpcAnswered(rpcAnswers);
    this.write();
  }

  /** While its Ponder runs, its RPC is asked every RPC_PROBE_MS; `false` stops asking (and forgets its backfill). */
  probing(on: boolean): void {
    clearInterval(this.probe);
    this.probe = undefined;
    this.backfill = null;
    if (!on) return;
    this.probe = setInterval(async () => {
      const reasons = await whyChainUnreachable(this.configured).catch((error: Error) => [error.message]);
      this.rpcAnswered(reasons.length === 0);
      this.write();
    }, RPC_PROBE_MS);
    this.probe.unref();
  }

  /** Its backfill as its Ponder last told it (readBackfills); null once live. */
  backfilled(progress: PonderBackfill | null): void {
    this.backfill = progress;
    this.write();
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

/**
 * Reads the backfill of the notes' chains from the /metrics of the Ponder that indexes them all (on
 * `port`) every BACKFILL_READ_MS, once for all, until every one is live; `stop()` ends it.
 */
export function readBackfills(port: number, notes: readonly IndexerNotes[]): { stop(): void } {
  const pending = new Set(notes);
  const timer = setInterval(async () => {
    const metrics = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(4_000) })
      .then((res) => (res.ok ? res.text() : undefined))
      .catch(() => undefined);
    if (metrics === undefined || stopped) return;
    for (const note of pending) {
      const backfill = ponderBackfillOf(metrics, note.chainName);
      if (backfill === undefined) continue;
      if (backfill === "live") pending.delete(note);
      note.backfilled(backfill === "live" ? null : backfill);
    }
    if (pending.size === 0) clearInterval(timer);
  }, BACKFILL_READ_MS);
  timer.unref();
  let stopped = false;
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}

/** The notes of the chains one Ponder indexes (a chain alone, or a group), noted together. */
export class GroupNotes {
  private backfills: { stop(): void } | undefined;

  constructor(private readonly notes: readonly IndexerNotes[]) {}

  note(...args: Parameters<IndexerNotes["note"]>): void {
    for (const n of this.notes) n.note(...args);
  }

  /** While its Ponder runs on `port`: its RPCs asked, its backfill read (once for all); undefined stops both. */
  probing(port: number | undefined): void {
    this.backfills?.stop();
    for (const n of this.notes) n.probing(port !== undefined);
    this.backfills = port === undefined ? undefined : readBackfills(port, this.notes);
  }
}
