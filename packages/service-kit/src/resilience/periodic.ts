/**
 * A reading taken now and then every `intervalMs` off the request path (a probe, a gauge refresh):
 * one run at a time, concurrent `tick()` calls share the run in progress, and the timer never
 * keeps the process alive.
 *
 * @example
 * const refresh = new Periodic(30_000, () => readOldestLetters());
 * refresh.start(); // runs at once, then every 30 s
 * await refresh.tick(); // a test's reading, shared with a run in progress
 * refresh.stop();
 */
export class Periodic {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly intervalMs: number,
    private readonly run: () => Promise<void>,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
    void this.tick();
  }

  /**
   * Stops the interval. A run in progress is not awaited (shutdown must not wait on a slow reading
   * before its drain); it ends by its own bounds.
   */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One run; concurrent calls share the one in progress. A failed run is the caller's to catch. */
  tick(): Promise<void> {
    this.running ??= this.run().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }
}
