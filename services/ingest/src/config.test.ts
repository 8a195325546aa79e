import { ConfigError } from '@event-observatory/service-kit/config';
import { describe, expect, it } from 'vitest';
import { readIngestConfig } from './config.js';

describe('ingest configuration', () => {
  it('has the spec defaults', () => {
    expect(readIngestConfig({})).toMatchObject({
      port: 8080,
      maxEventBytes: 1_048_576,
      maxBatchEvents: 256,
      maxFutureSkewMs: 24 * 3_600_000,
      maxPastSkewMs: 90 * 86_400_000,
    });
  });

  it('refuses an event ceiling the broker would refuse before the API could', () => {
    expect(() => readIngestConfig({ INGEST_MAX_EVENT_BYTES: '3000000' })).toThrow(ConfigError);
    expect(() => readIngestConfig({ INGEST_MAX_EVENT_BYTES: '3000000' })).toThrow(/INGEST_MAX_EVENT_BYTES/);
    expect(readIngestConfig({ INGEST_MAX_EVENT_BYTES: '2000000' }).maxEventBytes).toBe(2_000_000);
  });

  it('refuses an in-flight budget smaller than the largest request it must admit', () => {
    expect(readIngestConfig({}).maxInflightBytes).toBe(16_777_216);
    expect(() => readIngestConfig({ INGEST_MAX_INFLIGHT_BYTES: '8388608' })).toThrow(
      /^INGEST_MAX_INFLIGHT_BYTES: 8388608 is less than the largest request \(8390656 bytes/,
    );
    expect(
      readIngestConfig({ INGEST_MAX_INFLIGHT_BYTES: '1100000', INGEST_MAX_BATCH_BYTES: '1000000' })
        .maxInflightBytes,
    ).toBe(1_100_000);
  });

  it('refuses an unknown log level and a bad duration with one line naming the variable', () => {
    expect(() => readIngestConfig({ LOG_LEVEL: 'loud' })).toThrow(/^LOG_LEVEL/);
    expect(() => readIngestConfig({ INGEST_MAX_PAST_SKEW: 'soon' })).toThrow(/^INGEST_MAX_PAST_SKEW/);
  });
});
