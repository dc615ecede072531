import type { FeedEntry } from "./log";

/** An entry as the feed answers it: its record is the history's JSON, written as it is. */
export const entryJson = (e: FeedEntry): string =>
  `{"seq":${e.seq},"chainId":${e.chainId},"version":"${e.version}","blockNumber":${e.block},` +
  `"blockHash":"${e.blockHash}","logIndex":${e.logIndex},"retracts":${e.retracts ?? "null"},"event":${e.record}}`;
