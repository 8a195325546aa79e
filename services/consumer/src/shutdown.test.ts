/**
 * The shutdown plan run by the kit's shutdown runner, on a fake clock: the slowest legal cases
 * still close everything and exit 0 inside 40 s + CONSUMER_DRAIN_TIMEOUT (the README's Shutdown section).
 */
import { installShutdown } from '@event-observatory/service-kit';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type ConsumerClosers, consumerShutdown } from './shutdown.js';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const hangs = () => new Promise<never>(() => {});
const takes = (ms: number) => () => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Runs the plan on the fake clock until the exit; returns the exit code, its time and what closed. */
async function shutDown(drainTimeoutMs: number, slow: Partial<ConsumerClosers>) {
  const closed: string[] = [];
  const closer = (name: keyof ConsumerClosers) => async (): Promise<void> => {
    await slow[name]?.();
    closed.push(name);
  };
  const closers: ConsumerClosers = {
    listener: closer('listener'),
    consumer: closer('consumer'),
    deadLetterProducer: closer('deadLetterProducer'),
    adminClient: closer('adminClient'),
    pools: closer('pools'),
    metricsListener: closer('metricsListener'),
    telemetry: closer('telemetry'),
  };
  const started = Date.now();
  let exit: { code: number; at: number } | undefined;
  const handle = installShutdown({
    ...consumerShutdown(closers, { drainTimeoutMs, log: quiet }),
    logger: quiet,
    signals: [],
    exit: (code) => {
      exit = { code, at: Date.now() - started };
    },
  });
  void handle.shutdown('test');
  // Past the budget and then some: whatever was going to happen has happened.
  await vi.advanceTimersByTimeAsync(40_000 + drainTimeoutMs + 60_000);
  return { exit, closed };
}

describe('consumer shutdown', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('exits 0 within 40 s + the drain timeout, after closing pools, when the drain takes the full timeout and the dead-letter producer close hangs', async () => {
    const drain = 30_000;
    const { exit, closed } = await shutDown(drain, { consumer: takes(drain), deadLetterProducer: hangs });
    expect(exit?.code).toBe(0);
    expect(exit!.at).toBeLessThanOrEqual(40_000 + drain);
    expect(closed).toEqual(['listener', 'consumer', 'adminClient', 'pools', 'metricsListener', 'telemetry']);
  });

  it('fits a longer drain timeout the same way', async () => {
    const drain = 90_000;
    const { exit, closed } = await shutDown(drain, { consumer: takes(drain), deadLetterProducer: hangs });
    expect(exit?.code).toBe(0);
    expect(exit!.at).toBeLessThanOrEqual(40_000 + drain);
    expect(closed).toContain('pools');
  });

  it('gives every later step its turn inside the budget even when each step hangs', async () => {
    const drain = 30_000;
    const { exit } = await shutDown(drain, {
      listener: hangs,
      consumer: hangs,
      deadLetterProducer: hangs,
      adminClient: hangs,
      pools: hangs,
      metricsListener: hangs,
      telemetry: hangs,
    });
    expect(exit?.code).toBe(0);
    expect(exit!.at).toBeLessThanOrEqual(40_000 + drain);
  });

  it('closes at once when nothing is slow', async () => {
    const { exit, closed } = await shutDown(30_000, {});
    expect(exit).toEqual({ code: 0, at: 0 });
    expect(closed).toEqual([
      'listener',
      'consumer',
      'deadLetterProducer',
      'adminClient',
      'pools',
      'metricsListener',
      'telemetry',
    ]);
  });
});
