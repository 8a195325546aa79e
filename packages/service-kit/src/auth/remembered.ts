/**
 * Values remembered by a credential's exact string (a bearer token, a sealed cookie) so that a
 * repeated request skips the costly check (a signature, a decryption). Bounded, least recently used
 * dropped first. The caller decides at every hit whether the value still holds (its expiry, a key
 * set generation); one that does not is forgotten and checked in full again.
 *
 * @example
 * ```ts
 * const opened = new Remembered<{ session: Session; expiresAt: number }>(1024);
 * const hit = opened.get(cookie, (e) => e.expiresAt > Date.now());
 * if (!hit) opened.set(cookie, { session: await open(cookie), expiresAt });
 * ```
 */
export class Remembered<V> {
  // Map iteration order is insertion order: re-inserting on a hit makes it an LRU.
  private readonly entries = new Map<string, V>();

  /** `size` 0 (or less) remembers nothing. */
  constructor(private readonly size: number) {}

  /** The value remembered for `key` when `holds` says it still does; otherwise it is forgotten. */
  get(key: string, holds: (value: V) => boolean): V | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    this.entries.delete(key);
    if (!holds(value)) return undefined;
    this.entries.set(key, value);
    return value;
  }

  set(key: string, value: V): void {
    if (this.size <= 0) return;
    if (this.entries.size >= this.size) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, value);
  }
}
