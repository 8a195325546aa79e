import { describe, expect, it } from 'vitest';
import type { EventRejection } from './rejection.js';
import { buildEvent, checkTimeWindow, parseRfc3339 } from './validate.js';

const base = { specversion: '1.0', id: 'e1', source: '/src', type: 't', extensions: {} };
const DAY = 86_400_000;
const window = { maxFutureSkewMs: DAY, maxPastSkewMs: 90 * DAY };

function rejectionOf(fn: () => unknown): EventRejection {
  try {
    fn();
  } catch (err) {
    return err as EventRejection;
  }
  throw new Error('no rejection');
}

describe('RFC 3339', () => {
  it('parses offsets and fractions', () => {
    expect(parseRfc3339('2025-01-01T01:00:00+01:00')).toBe(Date.UTC(2025, 0, 1));
    expect(parseRfc3339('2025-01-01t00:00:00.1234z')).toBe(Date.UTC(2025, 0, 1) + 123);
  });
  it('refuses impossible dates and other formats', () => {
    expect(parseRfc3339('2025-02-30T00:00:00Z')).toBeUndefined();
    expect(parseRfc3339('2025-01-01 00:00:00Z')).toBeUndefined();
    expect(parseRfc3339('2025-01-01T00:00:00')).toBeUndefined();
    // the remembered last result never leaks into another text
    expect(parseRfc3339('2025-01-01T00:00:00')).toBeUndefined();
    expect(parseRfc3339('2025-01-01T00:00:00Z')).toBe(Date.UTC(2025, 0, 1));
    expect(parseRfc3339('2025-01-01T00:00:00Z')).toBe(Date.UTC(2025, 0, 1));
    expect(parseRfc3339('2025-01-01T00:00:01Z')).toBe(Date.UTC(2025, 0, 1) + 1000);
  });
});

describe('plausibility window', () => {
  const now = Date.UTC(2025, 5, 1);
  const at = (ms: number) => buildEvent({ ...base, time: new Date(ms).toISOString() });
  it('accepts both edges inclusively', () => {
    expect(checkTimeWindow(at(now + DAY), now, window)).toEqual({ direction: 'future', seconds: 86400 });
    expect(checkTimeWindow(at(now - 90 * DAY), now, window).direction).toBe('past');
  });
  it('rejects one millisecond beyond either edge as OutOfRange invalid-attributes with the window', () => {
    const future = rejectionOf(() => checkTimeWindow(at(now + DAY + 1), now, window));
    expect(future.kind).toBe('OutOfRange');
    expect(future.reason).toBe('invalid-attributes');
    expect(future.metadata.maxSkewSeconds).toBe('86400');
    const past = rejectionOf(() => checkTimeWindow(at(now - 90 * DAY - 1), now, window));
    expect(past.metadata.direction).toBe('past');
    expect(past.metadata.maxSkewSeconds).toBe(String(90 * 86400));
  });
  it('cuts configured skews to the plausible window (1970 to the clock plus 7 days)', () => {
    const wide = { maxFutureSkewMs: 365 * DAY, maxPastSkewMs: 200 * 365 * DAY };
    const ancient = rejectionOf(() =>
      checkTimeWindow(buildEvent({ ...base, time: '0050-01-01T00:00:00Z' }), now, wide),
    );
    expect(ancient.kind).toBe('OutOfRange');
    expect(ancient.metadata.earliest).toBe('1970-01-01T00:00:00.000Z');
    expect(rejectionOf(() => checkTimeWindow(at(now + 8 * DAY), now, wide)).metadata.latest).toBe(
      new Date(now + 7 * DAY).toISOString(),
    );
    expect(checkTimeWindow(at(0), now, wide).direction).toBe('past');
  });
  it('rejects an absent time as InvalidArgument', () => {
    const r = rejectionOf(() => checkTimeWindow(buildEvent(base), now, window));
    expect(r.kind).toBe('InvalidArgument');
    expect(r.reason).toBe('invalid-attributes');
  });
});

describe('attribute rules', () => {
  it('refuses empty ids, non-URI sources, control characters and bad media types', () => {
    expect(rejectionOf(() => buildEvent({ ...base, id: '' })).reason).toBe('invalid-attributes');
    expect(rejectionOf(() => buildEvent({ ...base, source: 'a b' })).reason).toBe('invalid-attributes');
    expect(rejectionOf(() => buildEvent({ ...base, type: 'a\u0001' })).reason).toBe('invalid-attributes');
    expect(rejectionOf(() => buildEvent({ ...base, datacontenttype: 'json' })).reason).toBe(
      'invalid-attributes',
    );
    expect(rejectionOf(() => buildEvent({ ...base, dataschema: '/relative' })).reason).toBe(
      'invalid-attributes',
    );
  });
  it("reserves the extension name 'data'", () => {
    expect(rejectionOf(() => buildEvent({ ...base, extensions: { data: 'x' } })).reason).toBe(
      'invalid-attributes',
    );
  });
});
