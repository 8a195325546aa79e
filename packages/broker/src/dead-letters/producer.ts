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
import type { RawRecord, RecordPosition } from './record.js';

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

  /** Publishes dead letters; resolves once the broker acknowledged all of them. */
  async publish(letters: readonly RawRecord[]): Promise<void> {
    await this.send(this.topics.dlqTopic, letters);
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
