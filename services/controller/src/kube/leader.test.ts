import type { V1Lease } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { mayTake, microTime } from './leader.js';

const lease = (holder?: string): V1Lease => ({ spec: { holderIdentity: holder, renewTime: new Date(0) } });

describe('taking a lease', () => {
  it('takes a lease nobody holds (released on shutdown) or that it holds itself', () => {
    expect(mayTake(lease(''), 'me', { record: 'x', at: 1_000 }, 1_000, 15_000)).toBe(true);
    expect(mayTake(lease('me'), 'me', { record: 'x', at: 1_000 }, 1_000, 15_000)).toBe(true);
  });

  it('waits the lease duration, on its own clock, since the holder last changed the record', () => {
    const seen = { record: 'other|t', at: 10_000 };
    expect(mayTake(lease('other'), 'me', seen, 24_999, 15_000)).toBe(false);
    expect(mayTake(lease('other'), 'me', seen, 25_000, 15_000)).toBe(true);
  });
});

describe('lease times', () => {
  it('are written with the six fraction digits the API server requires of a MicroTime', () => {
    expect(microTime(new Date('2026-11-24T11:42:29.336Z'))).toBe('2026-11-24T11:42:29.336000Z');
  });
});
