import { describe, expect, it } from 'vitest';
import { SEVERE_RANK, SEVERITY, severityName, severityRank, severityRankOfNumber } from './severity.js';

describe('severity ordering', () => {
  it('orders the canonical names strictly ascending with error at 50', () => {
    const ranks = Object.values(SEVERITY);
    expect([...ranks].sort((a, b) => a - b)).toEqual(ranks);
    expect(SEVERE_RANK).toBe(50);
  });

  it('reads names case-insensitively and ignores surrounding blanks', () => {
    expect(severityRank(' Warning ')).toBe(40);
    expect(severityRank('FATAL')).toBe(60);
    expect(severityRank('loud')).toBeUndefined();
  });

  it('trims spaces only, as SQL btrim does: a tab or newline keeps the name unknown', () => {
    expect(severityRank('\terror')).toBeUndefined();
    expect(severityRank('error\n')).toBeUndefined();
    expect(severityRank('  error  ')).toBe(50);
  });

  it('maps OpenTelemetry severity numbers onto the same ranks', () => {
    expect(severityRankOfNumber(1)).toBe(10);
    expect(severityRankOfNumber(17)).toBe(50);
    expect(severityRankOfNumber(24)).toBe(60);
    expect(severityRankOfNumber(25)).toBeUndefined();
  });

  it('names a rank by the greatest canonical name at or below it', () => {
    expect(severityName(55)).toBe('error');
    expect(severityName(5)).toBeUndefined();
  });
});
