import { describe, expect, it } from 'vitest';
import type { BatchResult } from '../write/processor.js';
import type { ConsumedRecord } from '../write/record.js';
import { BatchGrouper } from './grouper.js';

const recs = (partition: number, n: number): ConsumedRecord[] =>
  Array.from({ length: n }, (_, i) => ({
    topic: 't',
    partition,
    offset: String(i),
    key: null,
    value: null,
    headers: {},
    timestamp: '0',
  }));

const result: BatchResult = {
  outcome: 'success',
  attempted: 0,
  inserted: 0,
  duplicates: 0,
  deadLettered: 0,
  checkpoints: [],
};

describe('BatchGrouper', () => {
  it('groups submissions of several partitions into one batch when the size is reached', async () => {
    const groups: number[][] = [];
    const g = new BatchGrouper({
      size: 10,
      windowMs: 10_000,
      flush: async (r) => {
        groups.push([...new Set(r.map((x) => x.partition))]);
        return result;
      },
    });
    await Promise.all([g.submit(recs(0, 4)), g.submit(recs(1, 6))]);
    expect(groups).toEqual([[0, 1]]);
  });

  it('flushes a partial group when the window expires', async () => {
    const sizes: number[] = [];
    const g = new BatchGrouper({
      size: 100,
      windowMs: 20,
      flush: async (r) => {
        sizes.push(r.length);
        return result;
      },
    });
    const started = Date.now();
    await g.submit(recs(0, 3));
    expect(sizes).toEqual([3]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(15);
  });

  it('never exceeds the batch size and processes one group at a time by default', async () => {
    const sizes: number[] = [];
    let concurrent = 0;
    let peak = 0;
    const g = new BatchGrouper({
      size: 10,
      windowMs: 5,
      flush: async (r) => {
        concurrent++;
        peak = Math.max(peak, concurrent);
        sizes.push(r.length);
        await new Promise((res) => setTimeout(res, 10));
        concurrent--;
        return result;
      },
    });
    await Promise.all([0, 1, 2, 3, 4].map((p) => g.submit(recs(p, 7))));
    expect(Math.max(...sizes)).toBeLessThanOrEqual(10);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(35);
    expect(peak).toBe(1);
  });

  it('rejects every submission of a group whose processing failed', async () => {
    const g = new BatchGrouper({
      size: 2,
      windowMs: 1,
      flush: async () => Promise.reject(new Error('boom')),
    });
    await expect(Promise.all([g.submit(recs(0, 1)), g.submit(recs(1, 1))])).rejects.toThrow('boom');
  });
});

describe('BatchGrouper with sources', () => {
  it('does not wait for the window when every active source has a submission waiting', async () => {
    const g = new BatchGrouper({ size: 100, windowMs: 10_000, flush: async () => result });
    g.sourceStarted();
    g.sourceStarted();
    const started = Date.now();
    await Promise.all([g.submit(recs(0, 3)), g.submit(recs(1, 4))]);
    expect(Date.now() - started).toBeLessThan(1_000);
    g.sourceFinished();
    g.sourceFinished();
  });
});
