import type { InboundRecord } from '@event-observatory/broker';
import type { Decoded } from './decode.js';

/** A broker record as the consumer handles it, with its origin coordinates. */
export interface ConsumedRecord extends InboundRecord {
  /**
   * The decoded form, when it was decoded ahead of its group (the stream decodes a partition's
   * chunk while the previous group is being written); the processor decodes whatever lacks it.
   */
  decoded?: Decoded;
}

/** `topic/partition/offset`: the dead-letter key and the id of a dead letter. */
export function coordinates(r: Pick<ConsumedRecord, 'topic' | 'partition' | 'offset'>): string {
  return `${r.topic}/${r.partition}/${r.offset}`;
}

/** The next offset to read after `offset` (what a commit names). */
export function nextOffset(offset: string): string {
  return (BigInt(offset) + 1n).toString();
}
