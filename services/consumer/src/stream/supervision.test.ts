import { describe, expect, it } from 'vitest';
import { RestartPolicy } from './supervision.js';

describe('RestartPolicy', () => {
  it('backs off from 1 s doubling to 30 s', () => {
    const p = new RestartPolicy({ random: () => 0 });
    const delays = Array.from({ length: 7 }, (_, i) => p.onFailure(i));
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000]);
  });

  it('lengthens each delay by up to 20 %, never below the minimum nor above the maximum', () => {
    expect(new RestartPolicy({ random: () => 0 }).onFailure(0)).toBe(1000);
    expect(new RestartPolicy({ random: () => 0.5 }).onFailure(0)).toBe(1100);
    expect(new RestartPolicy({ random: () => 0.999999 }).onFailure(0)).toBe(1200);
    const top = new RestartPolicy({ random: () => 0.999999 });
    const delays = Array.from({ length: 8 }, (_, i) => top.onFailure(i)!);
    expect(delays.slice(4)).toEqual([19200, 30000, 30000, 30000]);
    const any = new RestartPolicy();
    for (let i = 0; i < 50; i++) {
      const base = Math.min(30_000, 1000 * 2 ** i);
      const d = any.onFailure(i)!;
      expect(d).toBeGreaterThanOrEqual(base);
      expect(d).toBeLessThanOrEqual(Math.min(30_000, base * 1.2));
    }
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
    const p = new RestartPolicy({ random: () => 0 });
    p.onFailure(0);
    p.onFailure(1);
    p.onProgress();
    expect(p.onFailure(2)).toBe(1000);
  });
});
