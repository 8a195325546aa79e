/** Records as the dead-letter API reads and writes them: bytes, without the Kafka client's types. */

/** A record's headers; a name may repeat, so a value may be a list. */
export type RecordHeaders = Record<string, Buffer | string | (Buffer | string)[] | undefined>;

/** A record to write as given: a dead letter, a tombstone (`value: null`), or a replayed original. */
export interface RawRecord {
  key: Buffer | string | null;
  value: Buffer | string | null;
  headers?: RecordHeaders;
  /** Epoch milliseconds as a decimal string; the broker's time when absent. */
  timestamp?: string;
  /** The partition to write to; the key's partition when absent. */
  partition?: number;
}

/** Where a written record landed. `offset` is an int64 in decimal. */
export interface RecordPosition {
  topic: string;
  partition: number;
  offset: string;
}
