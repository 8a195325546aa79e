import { describe, expect, it } from 'vitest';
import type { Condition } from '../pipeline/types.js';
import { removeCondition, setCondition } from './conditions.js';

const t0 = new Date('2026-01-01T00:00:00Z');
const t1 = new Date('2026-01-01T00:05:00Z');
const ready = (status: Condition['status'], generation: number) =>
  ({ type: 'Ready', status, reason: 'R', message: 'm', observedGeneration: generation }) as const;

describe('setCondition', () => {
  it('stamps a new condition with the current time', () => {
    expect(setCondition([], ready('Unknown', 1), t0)).toEqual([
      { ...ready('Unknown', 1), lastTransitionTime: t0.toISOString() },
    ]);
  });

  it('keeps lastTransitionTime when the status did not change, while reason and generation follow', () => {
    const first = setCondition([], ready('True', 1), t0);
    const again = setCondition(first, { ...ready('True', 2), reason: 'Other' }, t1);
    expect(again).toEqual([{ ...ready('True', 2), reason: 'Other', lastTransitionTime: t0.toISOString() }]);
  });

  it('moves lastTransitionTime when the status changes, and leaves other types alone', () => {
    const paused = { type: 'ReconciliationPaused', status: 'True', reason: 'P', message: '' } as const;
    const first = setCondition(setCondition([], ready('True', 1), t0), paused, t0);
    const changed = setCondition(first, ready('False', 1), t1);
    expect(changed.map((c) => [c.type, c.status, c.lastTransitionTime])).toEqual([
      ['Ready', 'False', t1.toISOString()],
      ['ReconciliationPaused', 'True', t0.toISOString()],
    ]);
    expect(removeCondition(changed, 'ReconciliationPaused').map((c) => c.type)).toEqual(['Ready']);
  });
});
