import { describe, expect, it } from 'vitest';
import { HistogramPanel } from './histogram.js';

const bucket = (hour: number, other: number) => ({
  start: new Date(Date.UTC(2026, 10, 26, hour)),
  severe: 0,
  warning: 0,
  other,
});

describe('HistogramPanel', () => {
  it('says a histogram estimated from a sample is an estimate, and of what share', () => {
    const html = String(
      HistogramPanel({
        histogram: {
          buckets: [bucket(0, 500), bucket(1, 700)],
          bucketMs: 3_600_000,
          source: 'sample',
          samplePercent: 2,
        },
        params: new URLSearchParams(),
      }),
    );
    expect(html).toContain('About 1,200 events');
    expect(html).toContain('estimated from a 2 % sample of the range, scaled');
  });

  it('gives a counted histogram without that label', () => {
    const html = String(
      HistogramPanel({
        histogram: { buckets: [bucket(0, 5)], bucketMs: 3_600_000, source: 'table' },
        params: new URLSearchParams(),
      }),
    );
    expect(html).toContain('5 events');
    expect(html).not.toContain('About');
    expect(html).not.toContain('sample');
  });
});
