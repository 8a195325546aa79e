/**
 * A produce request as kafkajs encodes it, reached through its internal protocol modules (no
 * broker): for the test of the project's kafkajs patch and `bench/kafkajs`, which compare the
 * patched encoder's shared pieces with kafkajs' copying. A subpath of its own
 * (`@event-observatory/broker/kafkajs-encoding`), so the services never load it.
 */
import { createRequire } from 'node:module';
import type { Message } from 'kafkajs';

const require = createRequire(import.meta.url);

/** kafkajs' encoder as the patch leaves it. */
export interface KafkajsEncoder {
  writeVarInt(value: number): unknown;
  writeInt32(value: number): unknown;
  /** The bytes, joined into one buffer. */
  buffer: Buffer;
  size(): number;
  /** The bytes as pieces in order, none copied. */
  parts(): Buffer[];
}

export const KafkajsEncoder = require('kafkajs/src/protocol/encoder.js') as (new () => KafkajsEncoder) & {
  /** Pieces this large are shared rather than copied. */
  SHARE_BYTES: number;
};

const Produce = require('kafkajs/src/protocol/requests/produce') as {
  protocol(v: { version: number }): (request: object) => { request: object };
};
const frame = require('kafkajs/src/protocol/request') as (request: object) => Promise<KafkajsEncoder>;

/**
 * One framed produce request of `records` as the producer sends them: v7 (the newest kafkajs
 * speaks), idempotent, acks=all, no compression, to one partition.
 */
export function encodeProduceRequest(records: Message[]): Promise<KafkajsEncoder> {
  const { request } = Produce.protocol({ version: 7 })({
    acks: -1,
    timeout: 30_000,
    compression: 0,
    producerId: 7,
    producerEpoch: 1,
    transactionalId: null,
    topicData: [{ topic: 'events', partitions: [{ partition: 2, firstSequence: 40, messages: records }] }],
  });
  return frame({ correlationId: 9, clientId: 'encoding', request });
}

/** Runs `work` with the patch's sharing turned off: kafkajs' own copying encoder. */
export async function withCopyingEncoder<T>(work: () => Promise<T>): Promise<T> {
  const shareBytes = KafkajsEncoder.SHARE_BYTES;
  KafkajsEncoder.SHARE_BYTES = Number.POSITIVE_INFINITY;
  try {
    return await work();
  } finally {
    KafkajsEncoder.SHARE_BYTES = shareBytes;
  }
}
