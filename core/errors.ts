/** An error and the errors it wraps (`cause`), outermost first; drivers and clients wrap errors several deep. */
export function* causes(error: unknown): Generator<Error> {
  for (let e = error, depth = 0; e instanceof Error && depth < 8; e = (e as { cause?: unknown }).cause, depth++)
    yield e;
}
