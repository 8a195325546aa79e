/**
 * The dead-letter producer: publishes dead letters, and replays one by re-publishing its original
 * record to the event topic and writing a tombstone for its key. Every send waits for all in-sync
 * replicas (`DEAD_LETTER_PRODUCER_PROPERTIES.acks`). A failed send reconnects the producer (it may
 * never have connected: the broker was down at boot) before it rejects, so the caller's next try
 * can succeed.
 */
import type { Producer } from 'kafkajs';
import type { ConsumerClients } from '../clients/consumer.js';
import { DEAD_LETTER_PRODUCER_PROPERTIES } from '../config/producer.js';
import { DEAD_LETTER_MAX_MESSAGE_BYTES } from '../topics/model.js';
import type { RawRecord, RecordPosition } from './record.js';

/**
 * Bytes of letters one send carries at most. kafkajs writes a send's messages for one partition as
 * one record batch, and the broker measures the whole batch against the topic's
 * `max.message.bytes`: three letters of large events together would be refused
 * (`MESSAGE_TOO_LARGE`) and retried for good. The margin covers the batch's and records' headers.
 */
export const DEAD_LETTER_SEND_BYTES = DEAD_LETTER_MAX_MESSAGE_BYTES - 64 * 1024;

/** A record's key, value and header bytes: what it adds to its record batch, near enough. */
function recordBytes(r: RawRecord): number {
  const size = (v: Buffer | string | null | undefined) =>
    v == null ? 0 : typeof v === 'string' ? Buffer.byteLength(v) : v.byteLength;
  let bytes = size(r.key) + size(r.value);
  for (const [name, value] of Object.entries(r.headers ?? {}))
    for (const v of Array.isArray(value) ? value : [value]) bytes += Buffer.byteLength(name) + size(v);
  return bytes;
}

/** `letters` in order, cut into runs of at most `limit` bytes (a letter larger alone goes alone). */
export function sendsOf(letters: readonly RawRecord[], limit = DEAD_LETTER_SEND_BYTES): RawRecord[][] {
  const sends: RawRecord[][] = [];
  let current: RawRecord[] = [];
  let bytes = 0;
  for (const letter of letters) {
    const size = recordBytes(letter);
    if (current.length > 0 && bytes + size > limit) {
      sends.push(current);
      current = [];
      bytes = 0;
    }
    current.push(letter);
    bytes += size;
  }
  if (current.length > 0) sends.push(current);
  return sends;
}

export interface DeadLetterTopics {
  /** The event topic replay writes to. */
  topic: string;
  dlqTopic: string;
}

/**
 * @example
 * ```ts
 * const deadLetters = new DeadLetterProducer(clients, { topic, dlqTopic });
 * await deadLetters.connect();
 * await deadLetters.publish([{ key: 'events/3/1207', value: letterJson }]);
 * ```
 */
export class DeadLetterProducer {
  private readonly producer: Producer;

  constructor(
    clients: ConsumerClients,
    private readonly topics: DeadLetterTopics,
  ) {
    this.producer = clients.deadLetterProducer();
  }

  connect(): Promise<void> {
    return this.producer.connect();
  }

  disconnect(): Promise<void> {
    return this.producer.disconnect();
  }

  /**
   * Publishes dead letters, in sends each under the topic's record limit (`sendsOf`); resolves once
   * the broker acknowledged all of them. A retry after a failure publishes them all again: the
   * topic is compacted by their keys, so a letter written twice is kept once.
   */
  async publish(letters: readonly RawRecord[]): Promise<void> {
    for (const send of sendsOf(letters)) await this.send(this.topics.dlqTopic, send);
  }

  /** Re-publishes a dead letter's original record to the event topic; where it landed. */
  async replay(original: RawRecord): Promise<RecordPosition> {
    const [meta] = await this.send(this.topics.topic, [original]);
    return { topic: this.topics.topic, partition: meta!.partition, offset: meta!.baseOffset ?? '' };
  }

  /** Writes the tombstone of a replayed dead letter: its key, no value, in its partition. */
  async tombstone(key: string, partition: number): Promise<void> {
    await this.send(this.topics.dlqTopic, [{ key, value: null, partition }]);
  }

  private async send(topic: string, messages: readonly RawRecord[]) {
    try {
      return await this.producer.send({
        topic,
        acks: DEAD_LETTER_PRODUCER_PROPERTIES.acks,
        messages: [...messages],
      });
    } catch (err) {
      await this.producer.connect().catch(() => {});
      throw err;
    }
  }
}
