/**
 * The dead-letter topic's compaction rule, applied by a scan itself since the log cleaner runs
 * late: records are read in offset order, the latest record of a key wins, and a tombstone (value
 * null: a dead letter already replayed) only removes its key. Every record of a key is in one
 * partition (the producer's partitioner; replay writes tombstones to the letter's partition), so
 * offset order within the partition is the order that decides.
 *
 * @example
 * const log = new CompactedLog<string>();
 * log.keep('t/0/7', 'first', { partition: 0, offset: '1' });
 * log.keep('t/0/7', 'again', { partition: 0, offset: '5' }); // redelivered: the latest wins
 * log.remove('t/0/7'); // its tombstone
 * log.first(10); // { items: [], more: false }
 */

/** The key a dead letter is compacted by: its record key, or its coordinates when it has none. */
export function compactionKey(key: Buffer | null, partition: number, offset: string): string {
  return key?.toString('utf8') ?? `${partition}/${offset}`;
}

/** Where a record was read, which orders the survivors. */
export interface LogPosition {
  partition: number;
  offset: string;
}

interface Entry<T> {
  item: T;
  position: LogPosition;
  bytes: number;
}

/** The live records of a compacted log read so far, with the bytes they hold. */
export class CompactedLog<T> {
  private readonly live = new Map<string, Entry<T>>();
  private held = 0;

  /** Bytes held by the live records (as given to `keep`). */
  get heldBytes(): number {
    return this.held;
  }

  /** A newer record of `key` that does not survive (a tombstone, or one not wanted): forgets the key. */
  remove(key: string): void {
    const prev = this.live.get(key);
    if (!prev) return;
    this.held -= prev.bytes;
    this.live.delete(key);
  }

  /** A newer record of `key` that survives: it replaces whatever the key held. */
  keep(key: string, item: T, position: LogPosition, bytes = 0): void {
    this.remove(key);
    this.live.set(key, { item, position, bytes });
    this.held += bytes;
  }

  /** The first `n` live records in (partition, offset) order; `more` when others were left out. */
  first(n: number): { items: T[]; more: boolean } {
    const all = [...this.live.values()].sort(
      (a, b) =>
        a.position.partition - b.position.partition ||
        Number(BigInt(a.position.offset) - BigInt(b.position.offset)),
    );
    return { items: all.slice(0, n).map((e) => e.item), more: all.length > n };
  }
}
