import { describe, expect, it } from 'vitest';
import {
  addMonths,
  headroomMonths,
  type MonthPartition,
  monthPartitionBounds,
  monthPartitionName,
} from './partitions.js';

const month = (iso: string): MonthPartition => {
  const from = new Date(iso);
  return { name: monthPartitionName(from), from, to: addMonths(from, 1) };
};

describe('month arithmetic in UTC', () => {
  it('steps across year ends both ways', () => {
    expect(addMonths(new Date('2026-12-31T23:59:59Z'), 1)).toEqual(new Date('2027-01-01T00:00:00Z'));
    expect(addMonths(new Date('2027-01-01T00:00:00Z'), -1)).toEqual(new Date('2026-12-01T00:00:00Z'));
    expect(addMonths(new Date('2026-11-30T12:00:00Z'), 14)).toEqual(new Date('2028-01-01T00:00:00Z'));
  });

  it('names and bounds a December partition with the next year as its upper bound, at +00', () => {
    const at = new Date('2026-12-15T00:00:00Z');
    expect(monthPartitionName(at)).toBe('cloud_event_2026_12');
    expect(monthPartitionBounds(at)).toEqual({
      from: '2026-12-01 00:00:00+00',
      to: '2027-01-01 00:00:00+00',
    });
  });
});

describe('partition headroom', () => {
  const parts = ['2026-11-01', '2026-12-01', '2027-01-01', '2027-02-01'].map((d) => month(`${d}T00:00:00Z`));

  it('counts the months after the current one covered without a gap', () => {
    expect(headroomMonths(parts, new Date('2026-11-24T08:00:00Z'))).toBe(3);
    expect(headroomMonths(parts, new Date('2027-01-31T23:59:59Z'))).toBe(1);
    expect(headroomMonths(parts, new Date('2027-02-01T00:00:00Z'))).toBe(0);
  });

  it('stops at the first missing month and is 0 when the current month has no partition', () => {
    const gap = parts.filter((p) => p.name !== 'cloud_event_2026_12');
    expect(headroomMonths(gap, new Date('2026-11-24T08:00:00Z'))).toBe(0);
    expect(headroomMonths(parts, new Date('2027-03-01T00:00:00Z'))).toBe(0);
    expect(headroomMonths(gap, new Date('2026-12-05T00:00:00Z'))).toBe(0);
  });
});
