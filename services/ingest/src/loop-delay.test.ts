import { afterEach, describe, expect, it, vi } from 'vitest';
import { OwnQueueing, ownQueueingDelay, standingLateness } from './loop-delay.js';

const ms = 1e6;

describe('the standing lateness of an interval', () => {
  it('is its least sample less the resolution, so a pause among short delays is no queue', () => {
    expect(standingLateness({ count: 9, min: 11 * ms }, 10, 250)).toBe(1);
    // A queue: every sample of the interval is late.
    expect(standingLateness({ count: 3, min: 50 * ms }, 10, 45)).toBe(40);
    expect(standingLateness({ count: 9, min: 9.9 * ms }, 10, 0)).toBe(0);
  });

  it("is the interval timer's own lateness when the loop was blocked through the whole interval", () => {
    expect(standingLateness({ count: 0, min: 0 }, 10, 280)).toBe(280);
  });
});

describe("the service's own queueing delay", () => {
  it('is the standing delay of a busy loop, and none for a loop that was late while mostly idle', () => {
    expect(ownQueueingDelay(80, 0.97)).toBe(80);
    expect(ownQueueingDelay(80, 0.4)).toBe(0);
  });
});

describe('the sampling of the queueing delay', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs from a wake while work is busy, and stops at the first interval that ends with nothing busy', () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    let busy = true;
    const reported: number[] = [];
    const queueing = new OwnQueueing(
      () => busy,
      (delayMs) => reported.push(delayMs),
      100,
    );
    expect(queueing.sampling).toBe(false);
    queueing.wake();
    queueing.wake();
    expect(queueing.sampling).toBe(true);
    vi.advanceTimersByTime(300);
    expect(reported).toHaveLength(3);
    expect(queueing.sampling).toBe(true);
    busy = false;
    vi.advanceTimersByTime(100);
    expect(queueing.sampling).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
    // Idle: nothing more is reported, however long.
    vi.advanceTimersByTime(10_000);
    expect(reported).toHaveLength(4);
    // The next work wakes it again.
    busy = true;
    queueing.wake();
    expect(queueing.sampling).toBe(true);
    queueing.stop();
    expect(vi.getTimerCount()).toBe(0);
  });
});
