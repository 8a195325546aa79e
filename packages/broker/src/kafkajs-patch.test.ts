/**
 * patches/kafkajs+2.2.4.patch (applied by `npm install`'s postinstall, patch-package) makes the
 * kafkajs encoder write varints in place, skip zero-filling its buffers and share large pieces
 * instead of copying them at every level of a produce request, and stops the request queue's idle
 * 1 ms timer loop, and makes a metadata request that every broker failed fail with the broker's
 * error (unpatched it resolved null, which callers read as metadata: a TypeError). These tests
 * fail if the patch is missing, and check the patched encoder writes
 * exactly the bytes of the Kafka protocol's zig-zag LEB128 varints, and of the copying encoder
 * for whole produce requests (the broker integration tests send them to Kafka, which checks each
 * batch's CRC).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Message } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import {
  KafkajsEncoder as Encoder,
  encodeProduceRequest,
  withCopyingEncoder,
} from './clients/kafkajs-encoding.js';

const require = createRequire(import.meta.url);
const encoderPath = require.resolve('kafkajs/src/protocol/encoder.js');

/** Zig-zag then unsigned LEB128, as the Kafka protocol defines varint. */
function referenceVarInt(value: number): number[] {
  let v = ((value << 1) ^ (value >> 31)) >>> 0;
  const out: number[] = [];
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  out.push(v);
  return out;
}

describe('kafkajs encoder patch', () => {
  it('is applied', () => {
    const source = readFileSync(encoderPath, 'utf8');
    expect(source).toContain('event-observatory patch');
    expect(source).not.toContain('Buffer.alloc(');
  });

  it('writes varints byte for byte as the protocol defines them, growing the buffer as needed', () => {
    const values = [
      0,
      1,
      -1,
      63,
      -64,
      64,
      127,
      128,
      300,
      -300,
      8191,
      8192,
      2 ** 20,
      2 ** 27,
      2 ** 30,
      -(2 ** 31),
      2 ** 31 - 1,
    ];
    const encoder = new Encoder();
    const expected: number[] = [];
    // Enough values to grow past the initial 512 bytes several times.
    for (let round = 0; round < 60; round++) {
      for (const v of values) {
        encoder.writeVarInt(v);
        expected.push(...referenceVarInt(v));
      }
      encoder.writeInt32(round);
      expected.push(0, 0, 0, round);
    }
    expect([...encoder.buffer]).toEqual(expected);
  });
});

/** The same request from kafkajs' copying encoder: one piece. */
function copiedRequest(records: Message[]): Promise<Buffer> {
  return withCopyingEncoder(async () => {
    const encoded = await encodeProduceRequest(records);
    expect(encoded.parts()).toHaveLength(1);
    return encoded.buffer;
  });
}

function messages(count: number, valueBytes: number): Message[] {
  const headers = Object.fromEntries(
    ['ce_id', 'ce_source', 'ce_type', 'ce_specversion', 'ce_time', 'ce_subject', 'content-type'].map(
      (name, i) => [name, Buffer.from(`${name}-value-${i}`)],
    ),
  );
  return Array.from({ length: count }, (_, i) => ({
    key: Buffer.from(`key-${i}`),
    value: Buffer.alloc(valueBytes, 97 + (i % 26)),
    headers,
    timestamp: String(1_700_000_000_000 + i),
  }));
}

describe('kafkajs produce request patch: shared pieces', () => {
  it('writes a large record byte for byte as the copying encoder, sharing its value instead of copying it', async () => {
    const batch = messages(1, 1_000_000);
    const encoded = await encodeProduceRequest(batch);
    const parts = encoded.parts();
    expect(Buffer.concat(parts).equals(await copiedRequest(batch))).toBe(true);
    expect(encoded.size()).toBe(Buffer.concat(parts).byteLength);
    expect(parts).toContain(batch[0]!.value);
  });

  it('writes a batch of small records with headers byte for byte as the copying encoder, in pieces', async () => {
    for (const count of [1, 3, 100, 500]) {
      const batch = messages(count, 1024);
      const encoded = await encodeProduceRequest(batch);
      const joined = Buffer.concat(encoded.parts());
      expect(joined.equals(await copiedRequest(batch)), `${count} records`).toBe(true);
      expect(encoded.buffer.equals(joined)).toBe(true);
    }
  });

  it('leaves a small request in one piece', async () => {
    const encoded = await encodeProduceRequest(messages(1, 100));
    expect(encoded.parts()).toHaveLength(1);
    expect(encoded.buffer.equals(await copiedRequest(messages(1, 100)))).toBe(true);
  });
});

interface RequestQueue {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: unknown;
  checkPendingRequests(): void;
  destroy(): void;
}
const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as new (options: {
  maxInFlightRequests: number;
  requestTimeout: number;
  enforceRequestTimeout: boolean;
  clientId: string;
  broker: string;
  logger: Record<'debug' | 'info' | 'warn' | 'error', () => void>;
}) => RequestQueue;

describe('kafkajs request queue patch', () => {
  const queue = () =>
    new RequestQueue({
      maxInFlightRequests: 1,
      requestTimeout: 30_000,
      enforceRequestTimeout: true,
      clientId: 'patch-test',
      broker: '127.0.0.1:9',
      logger: { debug() {}, info() {}, warn() {}, error() {} },
    });

  it('arms no timer after a response while nothing waits (unpatched: a 1 ms timer re-arming itself)', () => {
    const q = queue();
    q.checkPendingRequests(); // what every response does
    expect(q.throttleCheckTimeoutId).toBeNull();
    q.destroy();
  });

  it('still checks again later while a request waits out a broker throttle', () => {
    const q = queue();
    q.pending.push({});
    q.throttledUntil = Date.now() + 60_000;
    q.checkPendingRequests();
    expect(q.throttleCheckTimeoutId).not.toBeNull();
    q.destroy();
  });
});

describe('kafkajs metadata patch', () => {
  const Cluster = require('kafkajs/src/cluster/index.js');
  const createRetry = require('kafkajs/src/retry/index.js');
  const failure = (type: string) => Object.assign(new Error(type), { type, retriable: true });

  /**
   * `Cluster.metadata` over a broker pool whose metadata was fresh enough not to refresh and whose
   * one broker answers `answers` in turn; `withBroker` swallows a broker's error and answers null
   * when none succeeded, as kafkajs' own does.
   */
  function clusterAnswering(...answers: Array<Error | { topicMetadata: unknown[] }>) {
    let asked = 0;
    const broker = {
      metadata: async () => {
        const answer = answers[Math.min(asked++, answers.length - 1)];
        if (answer instanceof Error) throw answer;
        return answer;
      },
    };
    const brokerPool = {
      refreshMetadataIfNecessary: async () => {},
      withBroker: async (callback: (b: { nodeId: number; broker: typeof broker }) => Promise<unknown>) => {
        try {
          return await callback({ nodeId: 1, broker });
        } catch {
          return null;
        }
      },
    };
    const retrier = createRetry({ retries: 2, initialRetryTime: 1, maxRetryTime: 5 });
    return {
      metadata: (): Promise<unknown> =>
        Cluster.prototype.metadata.call({ brokerPool, retrier }, { topics: ['t'] }),
      asked: () => asked,
    };
  }

  it("fails with the broker's error when it fails the metadata (unpatched: resolves null, read as a TypeError)", async () => {
    const cluster = clusterAnswering(failure('UNKNOWN_TOPIC_OR_PARTITION'));
    await expect(cluster.metadata()).rejects.toMatchObject({ type: 'UNKNOWN_TOPIC_OR_PARTITION' });
    expect(cluster.asked()).toBe(1);
  });

  it('asks again after LEADER_NOT_AVAILABLE, as after a refresh that met it', async () => {
    const answer = { topicMetadata: [] };
    const cluster = clusterAnswering(failure('LEADER_NOT_AVAILABLE'), answer);
    await expect(cluster.metadata()).resolves.toBe(answer);
    expect(cluster.asked()).toBe(2);
  });
});
