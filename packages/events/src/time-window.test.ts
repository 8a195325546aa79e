import { describe, expect, it } from 'vitest';
import { MAX_AHEAD_MS, plausibleTimeProblem, plausibleWindow } from './time-window.js';

describe('plausible event time window', () => {
  const now = Date.UTC(2026, 10, 28);
  it('spans 1970-01-01 to the clock plus MAX_AHEAD_MS, both edges inclusive', () => {
    expect(plausibleWindow(now).earliest.toISOString()).toBe('1970-01-01T00:00:00.000Z');
    expect(plausibleTimeProblem(0, now)).toBeUndefined();
    expect(plausibleTimeProblem(now + MAX_AHEAD_MS, now)).toBeUndefined();
  });
  it('names the edge a time is beyond', () => {
    const year50 = new Date(0);
    year50.setUTCFullYear(50, 0, 1);
    expect(plausibleTimeProblem(year50.getTime(), now)).toBe('before 1970-01-01T00:00:00.000Z');
    expect(plausibleTimeProblem(-1, now)).toMatch(/^before/);
    expect(plausibleTimeProblem(now + MAX_AHEAD_MS + 1, now)).toMatch(/^after 2026-12-05/);
    expect(plausibleTimeProblem(Number.NaN, now)).toMatch(/^before/);
  });
});
