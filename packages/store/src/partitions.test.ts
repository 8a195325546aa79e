import { describe, expect, it } from 'vitest';
import {
  addMonths,
  headroomMonths,
  type MonthPartition,
  monthPartitionBounds,
  monthPartitionName,
  piecesByPartition,
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

  it('keeps years 0-99 as they are (Date.UTC would read them as 1900-1999)', () => {
    const year = (y: number, m = 0) => {
      const d = new Date(0);
      d.setUTCFullYear(y, m, 1);
      return d;
    };
    expect(addMonths(year(50, 5), 0)).toEqual(year(50, 5));
    expect(addMonths(year(50, 0), -1)).toEqual(year(49, 11));
    expect(addMonths(year(99, 11), 1)).toEqual(year(100, 0));
    expect(addMonths(year(0, 0), -1).getUTCFullYear()).toBe(-1);
    expect(addMonths(year(50, 0), -1) < year(50, 0)).toBe(true);
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

describe('a range cut by the partitions', () => {
  const parts = ['2026-10-01', '2026-11-01', '2027-01-01'].map((d) => month(`${d}T00:00:00Z`));
  const at = (iso: string) => new Date(`${iso}T00:00:00Z`);

  it('gives one piece a partition, newest first, and the stretches between them for the default partition', () => {
    expect(piecesByPartition(parts, { from: at('2026-10-15'), to: at('2027-01-20') })).toEqual([
      { from: at('2027-01-01'), to: at('2027-01-20') },
      { from: at('2026-12-01'), to: at('2027-01-01') },
      { from: at('2026-11-01'), to: at('2026-12-01') },
      { from: at('2026-10-15'), to: at('2026-11-01') },
    ]);
  });

  it('costs as many pieces as partitions whatever the span, open ends included', () => {
    const ancient = new Date(0);
    ancient.setUTCFullYear(50, 0, 1);
    const pieces = piecesByPartition(parts, { from: ancient, to: at('9999-12-31') });
    expect(pieces).toHaveLength(6);
    expect(pieces[0]).toEqual({ from: at('2027-02-01'), to: at('9999-12-31') });
    expect(pieces.at(-1)).toEqual({ from: ancient, to: at('2026-10-01') });
    expect(piecesByPartition(parts, {})).toHaveLength(6);
    expect(piecesByPartition(parts, {})[0]).toEqual({ from: at('2027-02-01') });
    expect(piecesByPartition(parts, {}).at(-1)).toEqual({ to: at('2026-10-01') });
  });

  it('is the span itself inside one partition or without partitions', () => {
    const span = { from: at('2026-10-02'), to: at('2026-10-03') };
    expect(piecesByPartition(parts, span)).toEqual([span]);
    expect(piecesByPartition([], { to: span.to })).toEqual([{ to: span.to }]);
  });
});
