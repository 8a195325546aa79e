import { describe, expect, it } from 'vitest';
import { type Pending, SendQueue } from './queue.js';
import { PublishError } from './record.js';

function pending(size: number, settled: string[], name: string): Pending {
  return {
    record: { key: name, value: null, headers: {} },
    headers: {},
    size,
    startedAt: performance.now(),
    deadline: performance.now() + 1_000,
    resolve: () => settled.push(`${name} ok`),
    reject: (e) => settled.push(`${name} ${e.kind}`),
  };
}

describe('the send queue', () => {
  it('refuses beyond its record capacity and, once something is queued, beyond its byte budget', () => {
    const q = new SendQueue({ capacity: 2, bytes: 100, maxBatchBytes: 1_000 }, () => {});
    expect(q.refusal(500)).toBeUndefined(); // an empty queue takes one record of any size
    q.push(pending(60, [], 'a'));
    expect(q.refusal(50)).toMatchObject({ kind: 'queue-full', notSent: true, message: /100 bytes/ });
    expect(q.refusal(40)).toBeUndefined();
    q.push(pending(40, [], 'b'));
    expect(q.refusal()).toMatchObject({ kind: 'queue-full', notSent: true, message: /2 records/ });
  });

  it('refuses every record with the one error of its limit (no stack trace per refused record)', () => {
    const q = new SendQueue({ capacity: 1, bytes: 100, maxBatchBytes: 1_000 }, () => {});
    q.push(pending(60, [], 'a'));
    const first = q.refusal();
    expect(first).toBeInstanceOf(PublishError);
    expect(q.refusal()).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
  });

  it('hands out batches in order up to the batch bytes, at least one record each', () => {
    const q = new SendQueue({ capacity: 10, bytes: 10_000, maxBatchBytes: 100 }, () => {});
    for (const [i, size] of [150, 40, 40, 40].entries()) q.push(pending(size, [], `r${i}`));
    expect(q.hasFullBatch).toBe(true);
    expect(q.take().map((p) => p.record.key)).toEqual(['r0']);
    expect(q.take().map((p) => p.record.key)).toEqual(['r1', 'r2']);
    expect(q.hasFullBatch).toBe(false);
    expect(q.take().map((p) => p.record.key)).toEqual(['r3']);
    expect(q.isEmpty).toBe(true);
  });

  it('settles every record once, reports it, and is idle when none is waiting or in flight', async () => {
    const settled: string[] = [];
    const observed: string[] = [];
    const q = new SendQueue({ capacity: 10, bytes: 10_000, maxBatchBytes: 100 }, (p, outcome) =>
      observed.push(`${p.record.key} ${outcome}`),
    );
    const a = pending(60, settled, 'a');
    const b = pending(60, settled, 'b');
    q.push(a);
    q.push(b);
    let idle = false;
    void q.idle().then(() => {
      idle = true;
    });
    const [inFlight] = q.take();
    q.resolve(inFlight!, { topic: 't', partition: 0, offset: '0', key: 'a' });
    for (const p of q.takeAll()) q.fail(p, 'closed', 'bye', true);
    await Promise.resolve();
    expect(settled).toEqual(['a ok', 'b closed']);
    expect(observed).toEqual(['a success', 'b failure']);
    expect(idle).toBe(true);
    expect(q.refusal(10_000)).toBeUndefined();
  });
});
