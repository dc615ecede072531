/**
 * The launcher's notes of each chain's indexer where chains are indexed apart, for every API process
 * to tell operators (api/watch/chain-indexers.ts): written when they change, never blocking the
 * chain's loop (a database that fails is written to again at the next change or probe).
 */
import type { AccessDb } from "../../api/database/db";
import { type IndexerActivity, noteIndexer } from "../../api/watch/chain-indexers";
import type { ConfiguredChain } from "../../core/settings";
import { urlRedactor } from "../../core/url";
import { whyChainUnreachable } from "./rpc";

/** How often a running chain's RPC is asked whether it answers: its failure is told within this long. */
export const RPC_PROBE_MS = 15_000;

/** One chain's notes: its indexer's state, and since when its RPC has not answered. */
export class IndexerNotes {
  private state: IndexerActivity = "waiting";
  private detail: string | null = null;
  private rpcFailingSince: string | null = null;
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

  /** The indexer's state now, why (waiting, restarting), and whether its RPC was just found to answer. */
  note(state: IndexerActivity, detail: string | null = null, rpcAnswers?: boolean): void {
    this.state = state;
    this.detail = detail === null ? null : this.redact(detail);
    if (rpcAnswers !== undefined) this.rpcAnswered(rpcAnswers);
    this.write();
  }

  /** While its Ponder runs, its RPC is asked every RPC_PROBE_MS; `false` stops asking. */
  probing(on: boolean): void {
    clearInterval(this.probe);
    this.probe = undefined;
    if (!on) return;
    this.probe = setInterval(async () => {
      const reasons = await whyChainUnreachable(this.configured).catch((error: Error) => [error.message]);
      this.rpcAnswered(reasons.length === 0);
      this.write();
    }, RPC_PROBE_MS);
    this.probe.unref();
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
    };
    const key = JSON.stringify(note);
    if (key === this.written) return;
    this.written = key;
    noteIndexer(this.db, this.accessSchema, note).catch(() => {
      this.written = "";
    });
  }
}
