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

/** CoDel's interval: a delay that stands this long is a queue, not a burst. */
export const QUEUE_DELAY_INTERVAL_MS = 100;

/** The share of an interval the loop must have been busy for its lateness to count as its own queue. */
export const BUSY_LOOP = 0.9;

/**
 * The service's own queueing delay of an interval: its standing lateness when the loop was busy
 * for at least `BUSY_LOOP` of it (event loop utilization), else none.
 */
export function ownQueueingDelay(standingMs: number, utilization: number): number {
  return utilization >= BUSY_LOOP ? standingMs : 0;
}

/** The minimum of the samples of each interval, reported once the interval is over. */
export class StandingDelay {
  private windowStart: number | undefined;
  private windowMin = Number.POSITIVE_INFINITY;

  /** `onInterval` receives each interval's standing delay in milliseconds. */
  constructor(
    private readonly intervalMs: number,
    private readonly onInterval: (delayMs: number) => void,
  ) {}

  /** One lateness sample (ms) taken at `now` (ms, monotonic). */
  observe(delayMs: number, now: number): void {
    this.windowStart ??= now;
    this.windowMin = Math.min(this.windowMin, delayMs);
    if (now - this.windowStart < this.intervalMs) return;
    this.onInterval(this.windowMin);
    this.windowStart = now;
    this.windowMin = Number.POSITIVE_INFINITY;
  }
}

/**
 * Samples the event loop's lateness every `resolutionMs` into `delay` with a timer that does not
 * keep the process alive; returns the function that stops it. A lateness sample costs one timer
 * callback, nothing per request.
 */
export function sampleEventLoop(delay: StandingDelay, resolutionMs = 10): () => void {
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    delay.observe(Math.max(0, now - last - resolutionMs), now);
    last = now;
  }, resolutionMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Reports the service's own queueing delay (`ownQueueingDelay`) once every `intervalMs` to
 * `onInterval`; returns the function that stops it.
 */
export function sampleOwnQueueing(
  onInterval: (delayMs: number) => void,
  intervalMs = QUEUE_DELAY_INTERVAL_MS,
): () => void {
  let since = performance.eventLoopUtilization();
  const standing = new StandingDelay(intervalMs, (delayMs) => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, since);
    since = now;
    onInterval(ownQueueingDelay(delayMs, utilization));
  });
  return sampleEventLoop(standing);
}
