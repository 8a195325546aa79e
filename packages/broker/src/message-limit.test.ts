import { describe, expect, it } from 'vitest';
import { maxEventBytesFit, RECORD_OVERHEAD_BYTES } from './message-limit.js';
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
