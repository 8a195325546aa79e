import { describe, expect, it } from 'vitest';
import { RestartPolicy } from './supervision.js';

describe('RestartPolicy', () => {
  it('backs off from 1 s doubling to 30 s', () => {
    const p = new RestartPolicy({ random: () => 0.5 });
    const delays = Array.from({ length: 7 }, (_, i) => p.onFailure(i));
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000]);
  });

  it('spreads each delay by at most 20 % either way', () => {
    expect(new RestartPolicy({ random: () => 0 }).onFailure(0)).toBe(800);
    expect(new RestartPolicy({ random: () => 1 }).onFailure(0)).toBe(1200);
  });

  it('stops for good on the 51st failure within 10 minutes', () => {
    const p = new RestartPolicy();
    for (let i = 0; i < 50; i++) expect(p.onFailure(i * 1000)).toBeDefined();
    expect(p.onFailure(50_000)).toBeUndefined();
  });

  it('forgets restarts older than the window', () => {
    const p = new RestartPolicy();
    for (let i = 0; i < 50; i++) p.onFailure(i);
    expect(p.onFailure(600_100)).toBeDefined();
  });

  it('starts the backoff over after progress', () => {
    const p = new RestartPolicy({ random: () => 0.5 });
    p.onFailure(0);
    p.onFailure(1);
    p.onProgress();
    expect(p.onFailure(2)).toBe(1000);
  });
});
