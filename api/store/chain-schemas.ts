/**
 * Where each chain's tables are: the schema of the indexer process that writes them. One process
 * writes one schema, for one chain or for several, so a deployment's chains may lie in several
 * schemas, each with its own Ponder checkpoint and readiness; an API process reads each chain from
 * its own.
 */
export class ChainSchemas {
  /** Every schema read, in the order first named: the fallback alone when no chain names one. */
  readonly all: readonly string[];

  /** `byChain`: the chains' schemas; a chain not in it is `fallback`'s. */
  constructor(
    private readonly byChain: ReadonlyMap<number, string>,
    private readonly fallback: string,
  ) {
    const named = new Set(byChain.values());
    this.all = named.size > 0 ? [...named] : [fallback];
  }

  /** The schemas `chains` name, each chain not naming one in `fallback`. */
  static served(chains: readonly { id: number; schema?: string }[], fallback: string): ChainSchemas {
    return new ChainSchemas(new Map(chains.map(({ id, schema }) => [id, schema ?? fallback])), fallback);
  }

  /** Every chain in `schema`. */
  static one(schema: string): ChainSchemas {
    return new ChainSchemas(new Map(), schema);
  }

  /** The schema holding the chain. */
  of(chainId: number): string {
    return this.byChain.get(chainId) ?? this.fallback;
  }

  /**
   * Whether a row kept for the chain under `indexerSchema` (an alarm, an indexer's note) is of the
   * indexer writing it now: under another schema it is an earlier indexer's.
   */
  holds(chainId: number, indexerSchema: unknown): boolean {
    return this.of(chainId) === indexerSchema;
  }
}

type Method = (chainId: number, ...rest: never[]) => unknown;

/**
 * One `make(schema)` per schema, as one: each call goes to the one of the chain named by its first
 * argument; `whole` gives the members that are not a chain's (one read of every chain, say). With a
 * single schema it is that schema's own, unwrapped.
 */
export function perChainSchema<T extends object>(
  schemas: ChainSchemas,
  make: (schema: string) => T,
  whole: (each: readonly T[]) => Partial<T> = () => ({}),
): T {
  const made = new Map(schemas.all.map((schema) => [schema, make(schema)]));
  if (made.size === 1) return [...made.values()][0]!;
  const own = whole([...made.values()]);
  const first = [...made.values()][0]!;
  const routed = new Map<PropertyKey, Method>();
  return new Proxy({} as T, {
    get(_, name) {
      if (name in own) return own[name as keyof T];
      // What the schemas' own lack (an optional member) the whole lacks too.
      if (!(name in first)) return undefined;
      let route = routed.get(name);
      if (route === undefined) {
        route = (chainId, ...rest) => {
          // A chain no schema holds: any answers that it holds nothing.
          const target = (made.get(schemas.of(chainId)) ?? first) as Record<PropertyKey, Method>;
          return target[name]!.call(target, chainId, ...rest);
        };
        routed.set(name, route);
      }
      return route;
    },
    has: (_, name) => name in own || name in first,
  });
}
