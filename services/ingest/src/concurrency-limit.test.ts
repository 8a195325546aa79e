import { describe, expect, it } from 'vitest';
import { GradientLimit } from './concurrency-limit.js';

/** Runs `samples` completions of one unit at `latencyMs`, keeping the limit full. */
function load(limit: GradientLimit, samples: number, latencyMs: number, ok = true): void {
  for (let i = 0; i < samples; i++) {
    while (limit.tryAcquire(1));
    limit.complete(1, latencyMs, ok);
  }
  while (limit.inFlight > 0) limit.release(1);
}

describe('the gradient concurrency limit', () => {
  it('admits up to the limit, and work larger than the limit when nothing else is in flight', () => {
    const limit = new GradientLimit({ initial: 10, min: 1, max: 100 });
    expect(limit.tryAcquire(8)).toBe(true);
    expect(limit.tryAcquire(3)).toBe(false);
    expect(limit.tryAcquire(2)).toBe(true);
    expect(limit.inFlight).toBe(10);
    limit.release(10);
    expect(limit.tryAcquire(50)).toBe(true);
    // Growing one's own work is allowed while it is all that is in flight, not beside others.
    expect(limit.tryAcquire(20, 50)).toBe(true);
    expect(limit.tryAcquire(1)).toBe(false);
    limit.release(70);
    limit.tryAcquire(5);
    limit.tryAcquire(5);
    expect(limit.tryAcquire(20, 5)).toBe(false);
  });

  it('grows while latency holds, up to its maximum', () => {
    const limit = new GradientLimit({ initial: 10, min: 1, max: 200 });
    load(limit, 50, 10);
    expect(limit.limit).toBeGreaterThan(20);
    load(limit, 2000, 10);
    expect(limit.limit).toBe(200);
  });

  it('shrinks when latency rises past the tolerance, never below its minimum, and recovers once it falls', () => {
    const limit = new GradientLimit({ initial: 100, min: 30, max: 100, tolerance: 2 });
    load(limit, 100, 10);
    expect(limit.limit).toBe(100);
    load(limit, 20, 100);
    expect(limit.limit).toBeLessThan(50);
    load(limit, 20, 1000);
    expect(limit.limit).toBe(30);
    load(limit, 3000, 10);
    expect(limit.limit).toBe(100);
  });

  it('tolerates a latency rise within the tolerance', () => {
    const limit = new GradientLimit({ initial: 100, min: 5, max: 100, tolerance: 2 });
    load(limit, 100, 10);
    load(limit, 30, 18);
    expect(limit.limit).toBe(100);
  });

  it('does not shrink for one slow sample: the recent latency is an average of a few', () => {
    const limit = new GradientLimit({ initial: 100, min: 5, max: 100, tolerance: 2 });
    load(limit, 100, 10);
    load(limit, 1, 40);
    expect(limit.limit).toBe(100);
  });

  it('backs off on failed work', () => {
    const limit = new GradientLimit({ initial: 100, min: 5, max: 100, backoff: 0.5 });
    limit.tryAcquire(1);
    limit.complete(1, 1, false);
    expect(limit.limit).toBe(50);
    expect(limit.inFlight).toBe(0);
  });

  it('learns nothing from work while less than half the limit is in use', () => {
    const limit = new GradientLimit({ initial: 100, min: 5, max: 100 });
    for (let i = 0; i < 100; i++) {
      limit.tryAcquire(1);
      limit.complete(1, i < 50 ? 10 : 1000, true);
    }
    expect(limit.limit).toBe(100);
  });

  it('is capped at what is in flight while the queueing delay stands above its target, and lets go once it falls back', () => {
    const limit = new GradientLimit({ initial: 1000, min: 50, max: 1000, queueDelayTarget: 20 });
    for (let i = 0; i < 300; i++) limit.tryAcquire(1);
    limit.queueDelay(10);
    expect(limit.limit).toBe(1000);
    // 30 ms against 20: what is in flight times two thirds, so the limit binds at once.
    limit.queueDelay(30);
    expect(limit.limit).toBe(200);
    expect(limit.fits(1)).toBe(false);
    // At most halved an interval however long the delay, never below the minimum.
    limit.queueDelay(1000);
    expect(limit.limit).toBe(100);
    limit.release(299);
    for (let i = 0; i < 10; i++) limit.queueDelay(1000);
    expect(limit.limit).toBe(50);
    // Work completing at an even latency does not lift the cap...
    load(limit, 200, 10);
    expect(limit.limit).toBe(50);
    // ...intervals under the target do, by half each, until it no longer binds.
    limit.queueDelay(5);
    expect(limit.limit).toBe(75);
    for (let i = 0; i < 10; i++) limit.queueDelay(5);
    expect(limit.limit).toBe(1000);
  });

  it('ignores the queueing delay without a target', () => {
    const limit = new GradientLimit({ initial: 100, min: 10, max: 100 });
    limit.tryAcquire(50);
    limit.queueDelay(10_000);
    expect(limit.limit).toBe(100);
  });
});
