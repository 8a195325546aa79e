/**
 * The set of event types some consumer recognises, from `INGEST_KNOWN_TYPES`: a comma-separated
 * list of exact types (`com.example.reading`) or prefixes ending in `*` (`com.example.*`).
 * Unset or empty means no list is known, and `event_unrecognised_total` stays at zero.
 */
export class KnownTypes {
  private readonly exact: Set<string>;
  private readonly prefixes: string[];

  constructor(entries: readonly string[]) {
    this.exact = new Set(entries.filter((e) => !e.endsWith('*')));
    this.prefixes = entries.filter((e) => e.endsWith('*')).map((e) => e.slice(0, -1));
  }

  /** False when no list was configured (nothing is judged). */
  get configured(): boolean {
    return this.exact.size > 0 || this.prefixes.length > 0;
  }

  recognises(type: string): boolean {
    return this.exact.has(type) || this.prefixes.some((p) => type.startsWith(p));
  }
}
