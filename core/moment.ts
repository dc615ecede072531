/**
 * A chain's block at a moment: the newest block whose timestamp is at or before it. Timestamps never
 * decrease along a chain, and several blocks may share one. The block is found from samples,
 * `(block, timestamp)` pairs already known, by arithmetic where the chain's blocks are a fixed step
 * apart, else by reading a few headers between the two samples nearest the moment
 * (docs/architecture.md, "Answers at a moment").
 */

/** A moment asked about (`timestamp`, Unix seconds), rather than a block. */
export type Moment = { timestamp: bigint };

/** A block and its timestamp (Unix seconds). */
export type Sample = { block: bigint; timestamp: bigint };

/**
 * The block at `moment` if the samples around it tell it: `before` at or before the moment, `after`
 * past it. `step`: the least number of seconds between a block and the next on this chain, by its
 * rules (0 where timestamps may repeat). Undefined: a header between them must be read.
 */
export function blockBetween(moment: bigint, before: Sample, after: Sample, step: bigint): bigint | undefined {
  if (after.block === before.block + 1n) return before.block;
  // No step is shorter than `step`, so steps that add up to exactly step·blocks are each `step`.
  if (step > 0n && after.timestamp - before.timestamp === step * (after.block - before.block))
    return before.block + (moment - before.timestamp) / step;
  return undefined;
}

/** Up to `k` blocks strictly between the samples, evenly spread: the headers to read next. */
export function probes(before: Sample, after: Sample, k: number): bigint[] {
  const span = after.block - before.block;
  const n = span - 1n < BigInt(k) ? span - 1n : BigInt(k);
  return Array.from({ length: Number(n) }, (_, i) => before.block + (span * BigInt(i + 1)) / (n + 1n));
}

/**
 * The samples nearest `moment` among `before`, `after` and `read` (blocks between them). A sample
 * out of order (a later block with an earlier timestamp) means the headers are of another branch
 * than the samples, or wrong: it throws rather than answer from them.
 */
export function nearest(moment: bigint, before: Sample, after: Sample, read: readonly Sample[]): [Sample, Sample] {
  let [low, high] = [before, after];
  for (const sample of read) {
    if (sample.timestamp <= moment) {
      if (sample.block > low.block) low = sample;
    } else if (sample.block < high.block) high = sample;
  }
  const ordered = [before, ...read, after].sort((a, b) => (a.block < b.block ? -1 : a.block > b.block ? 1 : 0));
  for (let i = 1; i < ordered.length; i++)
    if (ordered[i]!.timestamp < ordered[i - 1]!.timestamp)
      throw new Error(
        `block ${ordered[i]!.block} is stamped ${ordered[i]!.timestamp}, before block ${ordered[i - 1]!.block}'s ` +
          `${ordered[i - 1]!.timestamp}: the samples are not of one chain`,
      );
  return [low, high];
}

/**
 * The block at `moment` between `before` (at or before it) and `after` (past it): by blockBetween
 * where the samples tell it, else by reading `k` headers at a time between the nearest two (each
 * round narrows the gap about k+1 times). Returns the block and every sample read, to be kept.
 */
export async function blockAt(
  moment: bigint,
  before: Sample,
  after: Sample,
  step: bigint,
  read: (blocks: bigint[]) => Promise<Sample[]>,
  k = 32,
): Promise<{ block: bigint; read: Sample[] }> {
  if (!(before.timestamp <= moment && moment < after.timestamp && before.block < after.block))
    throw new RangeError(`moment ${moment} is not between the samples at blocks ${before.block} and ${after.block}`);
  const learned: Sample[] = [];
  let [low, high] = [before, after];
  for (;;) {
    const block = blockBetween(moment, low, high, step);
    if (block !== undefined) return { block, read: learned };
    const blocks = probes(low, high, k);
    const samples = await read(blocks);
    if (samples.length !== blocks.length || samples.some((s, i) => s.block !== blocks[i]))
      throw new Error(`asked for the headers of blocks ${blocks.join(", ")}, read ${samples.length} others`);
    learned.push(...samples);
    [low, high] = nearest(moment, low, high, samples);
  }
}
