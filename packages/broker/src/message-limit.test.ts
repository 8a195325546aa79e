import { describe, expect, it } from 'vitest';
import { maxEventBytesFit, RECORD_OVERHEAD_BYTES, recordBytesOver } from './message-limit.js';
import { EVENT_MAX_MESSAGE_BYTES } from './topics/model.js';

describe('does INGEST_MAX_EVENT_BYTES fit the topic', () => {
  it("holds the spec's 1 MiB ceiling on the event topic as this package creates it", () => {
    expect(maxEventBytesFit(1_048_576, EVENT_MAX_MESSAGE_BYTES).fits).toBe(true);
  });

  it("refuses the 1 MiB ceiling on a topic with Kafka's default limit, and says what would fit", () => {
    expect(maxEventBytesFit(1_048_576, 1_048_588)).toEqual({
      fits: false,
      maxEventBytes: 1_048_576,
      maxMessageBytes: 1_048_588,
      largestEventBytes: 1_048_588 - RECORD_OVERHEAD_BYTES,
      requiredMessageBytes: 1_048_576 + RECORD_OVERHEAD_BYTES,
    });
  });

  it('fits exactly at the largest ceiling and not one byte above it', () => {
    const limit = 500_000;
    expect(maxEventBytesFit(limit - RECORD_OVERHEAD_BYTES, limit).fits).toBe(true);
    expect(maxEventBytesFit(limit - RECORD_OVERHEAD_BYTES + 1, limit).fits).toBe(false);
  });
});

describe('the size of one record in a batch of its own (recordBytesOver)', () => {
  const record = (key: string, header: string) => ({
    key,
    value: new Uint8Array(1000),
    headers: { ce_source: header, ce_id: 'a' },
  });
  // 61 batch + 36 record framing, 1000 value bytes, two headers (10 framing each), names and values.
  const bytesOf = (key: number, header: number) =>
    61 + 36 + 1000 + 20 + key + 'ce_source'.length + header + 'ce_id'.length + 1;

  it('is nothing for a record under the limit, its UTF-8 size over it', () => {
    expect(recordBytesOver(record('k'.repeat(100), 'h'.repeat(100)), 10_000)).toBeUndefined();
    expect(recordBytesOver(record('k'.repeat(5_000), 'h'.repeat(5_000)), 10_000)).toBe(bytesOf(5_000, 5_000));
  });

  it('counts a character outside ASCII at its UTF-8 length', () => {
    // 3,000 units of 'é' (2 bytes each) in the key: within three bytes a unit, measured exactly.
    const limit = bytesOf(6_000, 10);
    expect(recordBytesOver(record('é'.repeat(3_000), 'h'.repeat(10)), limit)).toBeUndefined();
    expect(recordBytesOver(record('é'.repeat(3_000), 'h'.repeat(10)), limit - 1)).toBe(limit);
  });
});
