import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { WorkQueue } from './queue.js';

const backoff = { initialMs: 20, maxMs: 80 };

describe('work queue', () => {
  it('hands out a key added several times once, in the order keys were first added', async () => {
    const depths: number[] = [];
    const queue = new WorkQueue({ backoff, onDepth: (d) => depths.push(d) });
    queue.add('a');
    queue.add('b');
    queue.add('a');
    expect(queue.depth).toBe(2);
    expect(await queue.get()).toBe('a');
    expect(await queue.get()).toBe('b');
    expect(depths).toEqual([1, 2, 1, 0]);
  });

  it('never hands a key to two workers: added while processed, it comes back after done', async () => {
    const queue = new WorkQueue({ backoff });
    queue.add('a');
    const key = await queue.get();
    queue.add('a');
    expect(queue.depth).toBe(0);
    queue.done(key as string);
    expect(queue.depth).toBe(1);
    expect(await queue.get()).toBe('a');
  });

  it('wakes a waiting worker when a key arrives', async () => {
    const queue = new WorkQueue({ backoff });
    const next = queue.get();
    queue.add('late');
    expect(await next).toBe('late');
  });

  it('retries a failing key after a backoff that doubles up to the maximum, reset by forget', () => {
    const queue = new WorkQueue({ backoff });
    expect([1, 2, 3, 4].map(() => queue.addRateLimited('a'))).toEqual([20, 40, 80, 80]);
    expect(queue.retries('a')).toBe(4);
    queue.forget('a');
    expect(queue.addRateLimited('a')).toBe(20);
    queue.shutDown();
  });

  it('queues a rate-limited key only once its delay has passed', async () => {
    const queue = new WorkQueue({ backoff });
    queue.addRateLimited('a');
    expect(queue.depth).toBe(0);
    await sleep(40);
    expect(queue.depth).toBe(1);
  });

  it("caps a rate-limited delay at the caller's bound (a deadline), which a longer delay pending does not hold up", async () => {
    const queue = new WorkQueue({ backoff: { initialMs: 200, maxMs: 800 } });
    expect(queue.addRateLimited('a')).toBe(200);
    expect(queue.addRateLimited('a', 30)).toBe(30);
    await sleep(60);
    expect(queue.depth).toBe(1);
    // A later, longer delay does not replace an earlier, shorter one.
    queue.addAfter('b', 30);
    queue.addAfter('b', 10_000);
    await sleep(60);
    expect(queue.depth).toBe(2);
    queue.shutDown();
  });

  it('answers pending workers with undefined on shutdown and drops delayed keys', async () => {
    const queue = new WorkQueue({ backoff });
    const waiting = queue.get();
    queue.addAfter('a', 10);
    queue.shutDown();
    expect(await waiting).toBeUndefined();
    await sleep(20);
    expect(queue.depth).toBe(0);
  });
});
