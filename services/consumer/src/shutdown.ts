/**
 * The consumer's graceful shutdown (the README's Shutdown section), in this order: unbind
 * the admin and probe listeners, drain and commit the in-flight batch, close the dead-letter
 * producer, the admin client, the pools, the metrics listener and telemetry. The spec allows 40 s plus `CONSUMER_DRAIN_TIMEOUT` before
 * a forced kill, so the whole shutdown fits in that budget: each step is bounded by its own cap and
 * by what remains of the budget once every later step has kept a short reserve. The bounds can
 * therefore never add up to more than the budget, whatever each step does.
 *
 * A step cut at its bound is logged and left behind, not a failure: by then every offset committed
 * is durable (the invariant in DESIGN.md), so what is abandoned is a close, never data. A step that
 * fails is still a failure (exit 1).
 */

import type { ShutdownStep } from '@event-observatory/service-kit';
import type { Logger } from '@event-observatory/service-kit/logger';
import { settleWithin, TIMED_OUT } from '@event-observatory/service-kit/resilience';

/** The coordinated-shutdown budget (40 s, the platform's contract), to which the drain timeout is added. */
export const COORDINATED_SHUTDOWN_MS = 40_000;
/** Kept back from the budget for the exit itself (the last log lines, flushing stdout). */
const EXIT_MARGIN_MS = 1_000;
/** The least each later step is promised, when its cap is not smaller. */
const STEP_RESERVE_MS = 2_000;
/** kafkajs leaving the group after the drain (commit, LeaveGroup, disconnect). */
const LEAVE_GROUP_MS = 10_000;
/** A close that owes nothing but a socket or a flush. */
const CLOSE_MS = 5_000;

/** What the shutdown closes, each a call that resolves once that part is closed. */
export interface ConsumerClosers {
  /** The admin and probe listeners. */
  listener: () => Promise<unknown>;
  consumer: () => Promise<unknown>;
  deadLetterProducer: () => Promise<unknown>;
  adminClient: () => Promise<unknown>;
  pools: () => Promise<unknown>;
  /** Closed late, so the meters stay scrapeable while the batch drains. */
  metricsListener: () => Promise<unknown>;
  telemetry: () => Promise<unknown>;
}

export interface ShutdownPlanOptions {
  drainTimeoutMs: number;
  log: Logger;
}

interface BoundedStep extends ShutdownStep {
  /** Longest the step may take when the budget allows it. */
  capMs: number;
}

/**
 * The steps and the overall bound to give the kit's `installShutdown`.
 *
 * @example
 * installShutdown({ ...consumerShutdown(closers, { drainTimeoutMs, log: logger }), logger });
 */
export function consumerShutdown(
  closers: ConsumerClosers,
  opts: ShutdownPlanOptions,
): { steps: ShutdownStep[]; timeoutMs: number } {
  const budgetMs = COORDINATED_SHUTDOWN_MS + opts.drainTimeoutMs;
  const steps: BoundedStep[] = [
    { name: 'admin listener', run: closers.listener, capMs: CLOSE_MS },
    // The stream cuts its own drain at the drain timeout; then the consumer leaves the group.
    { name: 'consumer', run: closers.consumer, capMs: opts.drainTimeoutMs + LEAVE_GROUP_MS },
    { name: 'dead-letter producer', run: closers.deadLetterProducer, capMs: opts.drainTimeoutMs },
    { name: 'admin client', run: closers.adminClient, capMs: CLOSE_MS },
    { name: 'pools', run: closers.pools, capMs: CLOSE_MS },
    { name: 'metrics listener', run: closers.metricsListener, capMs: CLOSE_MS },
    { name: 'telemetry', run: closers.telemetry, capMs: CLOSE_MS },
  ];
  // The kit's overall bound stays the spec's budget, a backstop the steps end before.
  return { steps: withinBudget(steps, budgetMs - EXIT_MARGIN_MS, opts.log), timeoutMs: budgetMs };
}

/** Bounds each step by its cap and by what the budget leaves once the later steps' reserves are kept. */
function withinBudget(
  steps: readonly BoundedStep[],
  budgetMs: number,
  log: ShutdownPlanOptions['log'],
): ShutdownStep[] {
  let deadline: number | undefined;
  return steps.map((step, i) => {
    const reserved = steps
      .slice(i + 1)
      .reduce((sum, later) => sum + Math.min(later.capMs, STEP_RESERVE_MS), 0);
    return {
      name: step.name,
      run: async () => {
        deadline ??= Date.now() + budgetMs; // the budget starts with the first step
        const boundMs = Math.max(0, Math.min(step.capMs, deadline - Date.now() - reserved));
        const outcome = await settleWithin(Promise.resolve().then(step.run), boundMs);
        if (outcome === TIMED_OUT) log.warn({ step: step.name, boundMs }, 'shutdown step cut at its bound');
      },
    };
  });
}
