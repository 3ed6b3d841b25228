/**
 * A value made by `make` the first time it is asked for. Each resource's
 * statements are prepared this way: once (building a Drizzle query costs far
 * more than running it on an indexed table), and only after migrations have
 * made the tables they name.
 */
export function onFirstUse<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= make());
}
