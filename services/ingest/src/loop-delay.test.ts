import { describe, expect, it } from 'vitest';
import { ownQueueingDelay, StandingDelay } from './loop-delay.js';

/** Feeds `[delay, at]` samples. */
function feed(delay: StandingDelay, samples: Array<[number, number]>): void {
  for (const [ms, at] of samples) delay.observe(ms, at);
}

describe('the standing delay of the event loop', () => {
  it('reports the minimum of each interval once it is over, so a pause is no queue', () => {
    const reported: number[] = [];
    const delay = new StandingDelay(100, (ms) => reported.push(ms));
    // One long pause among short delays: the interval stands at the short ones.
    feed(delay, [
      [2, 0],
      [250, 10],
      [1, 50],
    ]);
    expect(reported).toEqual([]);
    delay.observe(3, 100);
    expect(reported).toEqual([1]);
    // A queue: every sample of the next interval is late.
    feed(delay, [
      [40, 140],
      [60, 180],
      [45, 230],
    ]);
    expect(reported).toEqual([1, 40]);
  });

  it('reports an interval of a single late sample (a loop blocked longer than the interval)', () => {
    const reported: number[] = [];
    const delay = new StandingDelay(100, (ms) => reported.push(ms));
    delay.observe(0, 0);
    delay.observe(300, 310);
    expect(reported).toEqual([0]);
    delay.observe(280, 600);
    expect(reported).toEqual([0, 280]);
  });
});

describe("the service's own queueing delay", () => {
  it('is the standing delay of a busy loop, and none for a loop that was late while mostly idle', () => {
    expect(ownQueueingDelay(80, 0.97)).toBe(80);
    expect(ownQueueingDelay(80, 0.4)).toBe(0);
  });
});
