import type { LoadRequest } from "./load";

/**
 * A draw of a request's index, by weight. Requests with a `group` are drawn one group at a time in
 * turn (in the order the list first names them), at random within it, as a client following Link
 * asks page 1, then page 2: a run of a few requests (--smoke) still measures every group.
 */
export function picker(requests: readonly Pick<LoadRequest, "group" | "weight">[], random = Math.random) {
  const byGroup = new Map<string | undefined, { indices: number[]; cumulative: number[] }>();
  requests.forEach(({ group, weight }, index) => {
    const drawn = byGroup.get(group) ?? { indices: [], cumulative: [] };
    byGroup.set(group, drawn);
    drawn.indices.push(index);
    drawn.cumulative.push((drawn.cumulative.at(-1) ?? 0) + (weight ?? 1));
  });
  const groups = [...byGroup.values()];
  let turn = 0;
  return (): number => {
    const { indices, cumulative } = groups[turn++ % groups.length]!;
    const drawn = random() * cumulative.at(-1)!;
    let [low, high] = [0, cumulative.length - 1];
    while (low < high) {
      const middle = (low + high) >> 1;
      if (cumulative[middle]! > drawn) high = middle;
      else low = middle + 1;
    }
    return indices[low]!;
  };
}
