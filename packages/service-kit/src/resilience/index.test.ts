import { describe, expect, it, vi } from 'vitest';
import {
  backoffDelay,
  Periodic,
  retry,
  settleWithin,
  TIMED_OUT,
  TimeoutError,
  withTimeout,
} from './index.js';

const never = new Promise<never>(() => {});

describe('deadlines', () => {
  it('passes the value on when the work settles first', async () => {
    await expect(settleWithin(Promise.resolve(7), 1_000)).resolves.toBe(7);
    await expect(withTimeout(Promise.resolve('ok'), 1_000, 'x')).resolves.toBe('ok');
  });

  it('answers TIMED_OUT, or a TimeoutError naming the work, when the deadline passes first', async () => {
    await expect(settleWithin(never, 10)).resolves.toBe(TIMED_OUT);
    const err = await withTimeout(never, 10, 'offset request').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect((err as TimeoutError).message).toBe('offset request timed out after 10 ms');
    expect((err as TimeoutError).timeoutMs).toBe(10);
  });

  it('answers TIMED_OUT at once when its signal is aborted, before the deadline', async () => {
    const abort = new AbortController();
    const started = performance.now();
    const outcome = settleWithin(never, 60_000, { signal: abort.signal });
    abort.abort();
    await expect(outcome).resolves.toBe(TIMED_OUT);
    expect(performance.now() - started).toBeLessThan(1_000);
    await expect(settleWithin(never, 60_000, { signal: AbortSignal.abort() })).resolves.toBe(TIMED_OUT);
  });

  it('passes a rejection of the work on unchanged', async () => {
    const boom = new Error('boom');
    await expect(withTimeout(Promise.reject(boom), 1_000, 'x')).rejects.toBe(boom);
  });

  it('clears its timer when the work settles, so nothing is left pending', async () => {
    vi.useFakeTimers();
    try {
      await settleWithin(Promise.resolve(1), 60_000);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('backoff', () => {
  it('doubles from the initial delay up to the maximum', () => {
    const policy = { initialMs: 1_000, maxMs: 30_000 };
    expect([0, 1, 2, 3, 4, 5, 6].map((n) => backoffDelay(policy, n, () => 0))).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000,
    ]);
  });

  it('stretches a delay by at most the random factor and never past the maximum', () => {
    const policy = { initialMs: 1_000, maxMs: 30_000, randomFactor: 0.2 };
    expect(backoffDelay(policy, 0, () => 0.999_999)).toBe(1_200);
    expect(backoffDelay(policy, 4, () => 0.999_999)).toBe(19_200);
    expect(backoffDelay(policy, 5, () => 0.999_999)).toBe(30_000);
  });

  it('stays finite for very large attempt numbers', () => {
    expect(backoffDelay({ initialMs: 50, maxMs: 5_000 }, 10_000, () => 0)).toBe(5_000);
  });
});

describe('retry', () => {
  const fast = { initialMs: 1, maxMs: 2 };

  it('calls again after a failure until the call succeeds', async () => {
    let calls = 0;
    const onRetry = vi.fn();
    const value = await retry(
      async () => {
        calls++;
        if (calls < 3) throw new Error(`fail ${calls}`);
        return 'done';
      },
      { backoff: fast, onRetry },
    );
    expect(value).toBe('done');
    expect(calls).toBe(3);
    expect(onRetry.mock.calls.map((c) => [(c[0] as Error).message, c[1]])).toEqual([
      ['fail 1', 0],
      ['fail 2', 1],
    ]);
  });

  it('gives up with the last failure when the attempts are used up', async () => {
    let calls = 0;
    const err = await retry(
      async () => {
        calls++;
        throw new Error(`fail ${calls}`);
      },
      { backoff: fast, attempts: 4 },
    ).catch((e: unknown) => e);
    expect(calls).toBe(4);
    expect((err as Error).message).toBe('fail 4');
  });

  it('does not retry a failure that is not retryable', async () => {
    let calls = 0;
    await expect(
      retry(
        async () => {
          calls++;
          throw new Error('deterministic');
        },
        { backoff: fast, retryable: () => false },
      ),
    ).rejects.toThrow('deterministic');
    expect(calls).toBe(1);
  });

  it('ends the wait at once with the abort reason when the signal aborts', async () => {
    const controller = new AbortController();
    const started = Date.now();
    const pending = retry(
      async () => {
        throw new Error('down');
      },
      { backoff: { initialMs: 60_000, maxMs: 60_000 }, signal: controller.signal },
    );
    setTimeout(() => controller.abort(new Error('stopping')), 20);
    await expect(pending).rejects.toThrow('stopping');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('refuses a policy with no attempt at all', async () => {
    await expect(retry(async () => 1, { backoff: fast, attempts: 0 })).rejects.toThrow(RangeError);
  });
});

describe('periodic', () => {
  it('runs at start and every interval, one run at a time, and not after stop', async () => {
    vi.useFakeTimers();
    try {
      let runs = 0;
      let finish = () => {};
      const periodic = new Periodic(1_000, () => {
        runs++;
        return new Promise<void>((resolve) => {
          finish = resolve;
        });
      });
      periodic.start();
      expect(runs).toBe(1);
      // A tick while the run is in progress shares it, as does the interval's.
      const shared = periodic.tick();
      await vi.advanceTimersByTimeAsync(1_000);
      expect(runs).toBe(1);
      finish();
      await shared;
      await vi.advanceTimersByTimeAsync(1_000);
      expect(runs).toBe(2);
      finish();
      periodic.stop();
      await vi.advanceTimersByTimeAsync(5_000);
      expect(runs).toBe(2);
    } finally {
      vi.useRealTimers();
    }
  });
});
