import { addMonths, type MonthPartition, monthPartitionName } from '@event-observatory/store';
import { describe, expect, it } from 'vitest';
import { planPartitions } from './partition-plan.js';

const months = (first: string, count: number): MonthPartition[] =>
  Array.from({ length: count }, (_, i) => {
    const from = addMonths(new Date(first), i);
    return { name: monthPartitionName(from), from, to: addMonths(from, 1) };
  });

describe('partition plan', () => {
  it('asks for the current month and three ahead across a year end', () => {
    const plan = planPartitions({ now: new Date('2026-11-30T23:59:59Z'), partitions: [], monthsAhead: 3 });
    expect(plan.missing.map((m) => m.toISOString())).toEqual([
      '2026-11-01T00:00:00.000Z',
      '2026-12-01T00:00:00.000Z',
      '2027-01-01T00:00:00.000Z',
      '2027-02-01T00:00:00.000Z',
    ]);
  });

  it('asks for nothing that exists, and for the next month once the clock crosses into it', () => {
    const partitions = months('2026-11-01T00:00:00Z', 4);
    expect(
      planPartitions({ now: new Date('2026-11-30T23:59:59Z'), partitions, monthsAhead: 3 }).missing,
    ).toEqual([]);
    expect(
      planPartitions({ now: new Date('2026-12-01T00:00:00Z'), partitions, monthsAhead: 3 }).missing.map((m) =>
        m.toISOString(),
      ),
    ).toEqual(['2027-03-01T00:00:00.000Z']);
  });

  it('detaches nothing when retention is unset', () => {
    const partitions = months('2020-01-01T00:00:00Z', 100);
    expect(
      planPartitions({ now: new Date('2026-11-15T00:00:00Z'), partitions, monthsAhead: 3 }).detach,
    ).toEqual([]);
  });

  it('keeps the current month and the retained months before it, across a year end', () => {
    const partitions = months('2026-08-01T00:00:00Z', 10);
    const plan = planPartitions({
      now: new Date('2027-02-10T00:00:00Z'),
      partitions,
      monthsAhead: 3,
      retainMonths: 3,
    });
    expect(plan.detach).toEqual(['cloud_event_2026_08', 'cloud_event_2026_09', 'cloud_event_2026_10']);
  });
});
