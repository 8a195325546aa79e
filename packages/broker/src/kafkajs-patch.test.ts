/**
 * patches/kafkajs+2.2.4.patch (applied by `npm install`'s postinstall, patch-package) makes the
 * kafkajs encoder write varints in place and skip zero-filling its buffers, and stops the request
 * queue's idle 1 ms timer loop. These tests fail if the patch is missing, and check the patched
 * encoder writes exactly the bytes of the Kafka protocol's zig-zag LEB128 varints (the broker
 * integration tests cover whole records).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const encoderPath = require.resolve('kafkajs/src/protocol/encoder.js');
const Encoder = require(encoderPath) as new () => {
  writeVarInt(v: number): unknown;
  writeInt32(v: number): unknown;
  buffer: Buffer;
};

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
