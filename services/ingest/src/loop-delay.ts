/**
 * The service's own queueing, measured as the event loop's standing delay (DESIGN.md, "Overload
 * control"): a request that has arrived waits, in the kernel's socket buffer and behind the loop's
 * other work, about as long as the loop takes to come round to it, which is what a timer's lateness
 * measures. As in CoDel, the signal is the *minimum* lateness over an interval: a pause (a garbage
 * collection, a descheduled process) raises a few samples, while only a queue that stands for the
 * whole interval raises them all. And only a loop that was busy over the interval is queueing its
 * own work: a loop that is late while mostly idle was waiting for a core that the machine gave to
 * other processes, a wait no refusal of its own removes.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';

/** CoDel's interval: a delay that stands this long is a queue, not a burst. */
export const QUEUE_DELAY_INTERVAL_MS = 100;

/** The share of an interval the loop must have been busy for its lateness to count as its own queue. */
export const BUSY_LOOP = 0.9;

/** Period (ms) of the lateness samples within an interval. */
const RESOLUTION_MS = 10;

/**
 * The service's own queueing delay of an interval: its standing lateness when the loop was busy
 * for at least `BUSY_LOOP` of it (event loop utilization), else none.
 */
export function ownQueueingDelay(standingMs: number, utilization: number): number {
  return utilization >= BUSY_LOOP ? standingMs : 0;
}

/**
 * The standing lateness (ms) of an interval: the least of its samples, each a timer period
 * (`monitorEventLoopDelay` records the whole period) less the resolution. An interval without a
 * sample is one the loop was blocked through: its own timer's lateness stands for it.
 */
export function standingLateness(
  samples: { count: number; min: number },
  resolutionMs: number,
  tickLatenessMs: number,
): number {
  if (samples.count === 0) return Math.max(0, tickLatenessMs);
  return Math.max(0, samples.min / 1e6 - resolutionMs);
}

/**
 * Reports the service's own queueing delay (`ownQueueingDelay`) once every `intervalMs` to
 * `onInterval`, but only while `busy()`: `wake()` (called as work is admitted) starts the
 * sampling, and the first interval that ends with nothing busy stops it. Sampling costs an idle
 * process a timer callback a few milliseconds apart, about 1 % of a core, which is most of the CPU
 * an idle pod is allowed before an autoscaler reads it as load; stopped, it costs nothing. The
 * samples come from `monitorEventLoopDelay`, whose timer runs in Node's native layer (no
 * JavaScript per sample), the minimum kept by its histogram.
 */
export class OwnQueueing {
  private readonly lateness = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  private timer: NodeJS.Timeout | undefined;
  private since = performance.eventLoopUtilization();
  private lastTick = 0;

  constructor(
    private readonly busy: () => boolean,
    private readonly onInterval: (delayMs: number) => void,
    private readonly intervalMs = QUEUE_DELAY_INTERVAL_MS,
  ) {}

  /** Whether it is sampling now. */
  get sampling(): boolean {
    return this.timer !== undefined;
  }

  /** Starts sampling unless it already is (cheap enough to call on every admission). */
  wake(): void {
    if (this.timer) return;
    this.lateness.reset();
    this.lateness.enable();
    this.since = performance.eventLoopUtilization();
    this.lastTick = performance.now();
    // Does not keep the process alive.
    this.timer = setInterval(() => this.tick(), this.intervalMs).unref();
  }

  /** Stops sampling (shutdown; an idle stretch stops it by itself). */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.lateness.disable();
  }

  private tick(): void {
    const now = performance.now();
    const elu = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(elu, this.since);
    const standing = standingLateness(this.lateness, RESOLUTION_MS, now - this.lastTick - this.intervalMs);
    this.since = elu;
    this.lastTick = now;
    this.lateness.reset();
    this.onInterval(ownQueueingDelay(standing, utilization));
    if (!this.busy()) this.stop();
  }
}
