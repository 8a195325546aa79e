/**
 * The consumer's graceful shutdown (Document 2, section 1, rule 3), in the spec's order.
 */
import type { ShutdownStep } from '@event-observatory/service-kit';
import { withTimeout } from '@event-observatory/service-kit/resilience';

/** What the shutdown closes, each a call that resolves once that part is closed. */
export interface ConsumerClosers {
  listener: () => Promise<unknown>;
  consumer: () => Promise<unknown>;
  deadLetterProducer: () => Promise<unknown>;
  adminClient: () => Promise<unknown>;
  pools: () => Promise<unknown>;
  telemetry: () => Promise<unknown>;
}

export interface ShutdownPlanOptions {
  drainTimeoutMs: number;
}

/** The steps and the overall bound to give the kit's `installShutdown`. */
export function consumerShutdown(
  closers: ConsumerClosers,
  opts: ShutdownPlanOptions,
): { steps: ShutdownStep[]; timeoutMs: number } {
  return {
    steps: [
      { name: 'admin listener', run: closers.listener },
      { name: 'consumer', run: closers.consumer },
      {
        name: 'dead-letter producer',
        run: () =>
          withTimeout(closers.deadLetterProducer(), opts.drainTimeoutMs, 'dead-letter producer close'),
      },
      { name: 'admin client', run: closers.adminClient },
      { name: 'pools', run: closers.pools },
      { name: 'telemetry', run: closers.telemetry },
    ],
    timeoutMs: opts.drainTimeoutMs + 10_000,
  };
}
