/**
 * Whether an event of `INGEST_MAX_EVENT_BYTES` fits the event topic's `max.message.bytes`, and the admin
 * read of that limit. The API, not the broker, refuses an oversized event; a topic
 * whose limit is below a maximal event's record (created by someone else, with Kafka's default
 * 1048588 bytes) would refuse it instead, and the client would retry that 503 forever.
 */
import { withTimeout } from '@event-observatory/service-kit/resilience';
import type { Admin } from 'kafkajs';
import { createKafka } from './clients/kafka.js';
import type { ProducerConfig } from './config/producer.js';

/**
 * Room kept below `max.message.bytes` for everything of a record that is not the event's raw body.
 * Kafka checks the limit against a whole record batch (v2 format), so one event alone needs:
 *
 * - batch framing: 61 bytes (the 12-byte offset and length Kafka counts, and the 49-byte header);
 * - record framing: at most 36 bytes (length, attributes, timestamp and offset deltas, key and
 *   value lengths, header count) plus at most 10 bytes a header (two length varints);
 * - the key and the headers. In binary mode they come from the HTTP head, which Node caps at
 *   16 KiB (its default `--max-http-header-size`): the `ce_` headers are no larger than the HTTP
 *   lines they came from, the key (`source#subject`) repeats two of them, so at most 2 x 16 KiB;
 *   `traceparent` (55 bytes) and `tracestate` (at most 512 by W3C) are added. In structured mode
 *   (and for batch elements) the attributes are inside the counted body and their headers are no
 *   larger than their JSON members; only the key's repeat of `source` and `subject` comes on top.
 *   In both, ingest's `observatory-producer` header repeats the token's `sub` and `iss`, which
 *   came in the same HTTP head (its `authorization` line): at most another 16 KiB.
 *
 * 64 KiB covers the binary mode with about 14 KiB to spare (~50 KiB needed), and any structured
 * event whose `source` and `subject` together stay under ~48 KiB; ingest refuses an event whose
 * record would be larger still (`recordBytesOver`), so the limit is never the broker's to enforce.
 */
export const RECORD_OVERHEAD_BYTES = 64 * 1024;

/** Framing of a record batch of one record: Kafka's 12-byte offset and length, the 49-byte header. */
const BATCH_FRAMING_BYTES = 61;
/** A record's own framing at most: length, attributes, deltas, key and value lengths, header count. */
const RECORD_FRAMING_BYTES = 36;
/** A header's framing at most: the lengths of its name and value. */
const HEADER_FRAMING_BYTES = 10;

/** A record's framing at most in a batch, beside its key, value and `headers` headers. */
export function recordFramingBytes(headers: number): number {
  return RECORD_FRAMING_BYTES + headers * HEADER_FRAMING_BYTES;
}

/**
 * The bytes `record` takes alone in a record batch (what Kafka holds against `max.message.bytes`)
 * when that is over `limit`, else undefined. The bound most records meet is checked first at three
 * bytes a UTF-16 unit (the most UTF-8 takes), so the key and headers are measured only for a
 * record near the limit: one whose `source` and `subject` fill the body, which the key repeats, or
 * whose extensions are numbers written short (`1e9` is the header `1000000000`).
 */
export function recordBytesOver(
  record: { key: string; value: Uint8Array | null; headers: Record<string, string> },
  limit: number,
): number | undefined {
  let headers = 0;
  let units = record.key.length;
  for (const name in record.headers) {
    headers++;
    units += name.length + record.headers[name]!.length;
  }
  const framing = BATCH_FRAMING_BYTES + recordFramingBytes(headers) + (record.value?.byteLength ?? 0);
  if (framing + 3 * units <= limit) return undefined;
  let bytes = framing + Buffer.byteLength(record.key);
  for (const name in record.headers)
    bytes += Buffer.byteLength(name) + Buffer.byteLength(record.headers[name]!);
  return bytes > limit ? bytes : undefined;
}

/** The verdict on one event size limit against one topic limit, with the numbers a message needs. */
export interface MaxEventBytesFit {
  fits: boolean;
  /** The ingest API's largest event (`INGEST_MAX_EVENT_BYTES`). */
  maxEventBytes: number;
  /** The topic's `max.message.bytes`. */
  maxMessageBytes: number;
  /** The largest event this topic holds. */
  largestEventBytes: number;
  /** The smallest `max.message.bytes` that holds an event of `maxEventBytes`. */
  requiredMessageBytes: number;
}

/**
 * Whether a raw event body of `maxEventBytes` still fits in one record under `maxMessageBytes`.
 *
 * @example
 * maxEventBytesFit(1_048_576, 2_097_152).fits; // true
 * maxEventBytesFit(1_048_576, 1_048_588);      // { fits: false, largestEventBytes: 983052, requiredMessageBytes: 1114112, ... }
 */
export function maxEventBytesFit(maxEventBytes: number, maxMessageBytes: number): MaxEventBytesFit {
  const largestEventBytes = maxMessageBytes - RECORD_OVERHEAD_BYTES;
  return {
    fits: maxEventBytes <= largestEventBytes,
    maxEventBytes,
    maxMessageBytes,
    largestEventBytes,
    requiredMessageBytes: maxEventBytes + RECORD_OVERHEAD_BYTES,
  };
}

// kafkajs ConfigResourceTypes.TOPIC, as a literal so this module needs only the kafkajs types for it.
const TOPIC_RESOURCE = 2;

/**
 * The topic's effective `max.message.bytes`: its own setting or, without one, the broker's
 * `message.max.bytes` (DescribeConfigs answers the value in force either way).
 */
export async function readMaxMessageBytes(admin: Admin, topic: string): Promise<number> {
  const { resources } = await admin.describeConfigs({
    includeSynonyms: false,
    resources: [{ type: TOPIC_RESOURCE, name: topic, configNames: ['max.message.bytes'] }],
  });
  const value = resources[0]?.configEntries.find((e) => e.configName === 'max.message.bytes')?.configValue;
  const bytes = Number(value);
  if (value === undefined || !Number.isSafeInteger(bytes) || bytes <= 0) {
    throw new Error(`topic ${topic}: no usable max.message.bytes in the broker's answer (${String(value)})`);
  }
  return bytes;
}

/** Reads the event topic's `max.message.bytes` on demand, over one admin connection kept open. */
export interface MessageLimitReader {
  /** The limit now; rejects when the broker does not answer within its bounds. */
  read(): Promise<number>;
  close(): Promise<void>;
}

/**
 * A reader of `config.topic`'s limit, with an admin client set up like the producer's (same client
 * id, connection and request timeouts, no retries: the caller asks again on its own schedule).
 * A read is bounded by `BROKER_MAX_BLOCK` plus `BROKER_REQUEST_TIMEOUT`; after a failure the next
 * read connects afresh.
 *
 * @example
 * const limit = messageLimitReader(readProducerConfig(process.env));
 * const fit = maxEventBytesFit(1_048_576, await limit.read());
 * await limit.close();
 */
export function messageLimitReader(config: ProducerConfig): MessageLimitReader {
  const p = config.producer;
  const kafka = createKafka({
    clientId: p.clientId,
    brokers: config.bootstrapServers,
    connectionTimeout: Math.min(p.connectionTimeout, config.maxBlockMs),
    requestTimeout: config.requestTimeoutMs,
    enforceRequestTimeout: true,
    retry: { retries: 0 },
    security: config.security,
  });
  const admin = kafka.admin({ retry: { retries: 0 } });
  let connected = false;
  return {
    async read() {
      const work = (async () => {
        if (!connected) {
          await admin.connect();
          connected = true;
        }
        return readMaxMessageBytes(admin, config.topic);
      })();
      try {
        return await withTimeout(
          work,
          config.maxBlockMs + config.requestTimeoutMs,
          `reading max.message.bytes of topic ${config.topic}`,
        );
      } catch (err) {
        work.catch(() => {});
        connected = false;
        await admin.disconnect().catch(() => {});
        throw err;
      }
    },
    async close() {
      connected = false;
      await admin.disconnect().catch(() => {});
    },
  };
}
