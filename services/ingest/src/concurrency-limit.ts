/**
 * An adaptive concurrency limit in the manner of Netflix concurrency-limits' `Gradient2Limit`:
 * the limit on work in flight follows the ratio of the long-term latency to the recent one (an
 * average of the last few samples, as Netflix's windowed limit feeds Gradient2). While
 * latency holds, the limit grows by about its square root per sample (probing for more
 * throughput); when latency rises above `tolerance` times its long-term average, the limit shrinks
 * by that gradient (at most by half a sample, smoothed), so queueing is refused up front instead
 * of waited out. A failed sample (the work was dropped) backs off multiplicatively. A second
 * signal, the caller's own standing queueing delay (`queueDelay`, once per interval), caps the
 * limit when work waits *before* it is admitted, which the latency of admitted work cannot show
 * (CoDel judges the same kind of delay against a target); the limit is the lower of the two. The
 * unit is whatever the caller charges (ingest charges events, DESIGN.md says why).
 */

export interface GradientLimitOptions {
  /** Starting limit; default `max`. */
  initial?: number;
  min: number;
  max: number;
  /** Latency rise over the long-term average tolerated before shrinking; default 2. */
  tolerance?: number;
  /** Weight of a new limit against the current one; default 0.2. */
  smoothing?: number;
  /** Samples the long-term latency averages over; default 600. */
  longWindow?: number;
  /** Samples the recent latency averages over (one slow sample is not a trend); default 10. */
  shortWindow?: number;
  /** Factor applied on a failed sample; default 0.9. */
  backoff?: number;
  /** Standing queueing delay (ms) above which `queueDelay` caps the limit; default never. */
  queueDelayTarget?: number;
}

/** Growth of the queueing cap per interval under the target (from 256 events to 1,024 in 0.4 s). */
const QUEUE_CAP_GROWTH = 1.5;

/** Exponential moving average that starts as the plain mean of its first samples. */
class MovingAverage {
  private value = 0;
  private count = 0;

  constructor(private readonly window: number) {}

  get current(): number {
    return this.value;
  }

  add(sample: number): void {
    if (this.count < 10) {
      this.count++;
      this.value += (sample - this.value) / this.count;
    } else {
      this.value += (2 / (this.window + 1)) * (sample - this.value);
    }
  }

  /** Moves the average towards a lower recent latency (recovery after a spike). */
  scale(factor: number): void {
    this.value *= factor;
  }
}

export class GradientLimit {
  private current: number;
  private used = 0;
  /** The cap the standing queueing delay puts on the limit (none while the delay stays under target). */
  private queueCap = Number.POSITIVE_INFINITY;
  private readonly long: MovingAverage;
  private readonly short: MovingAverage;
  private readonly o: Required<Omit<GradientLimitOptions, 'initial'>>;

  constructor(opts: GradientLimitOptions) {
    this.o = {
      min: opts.min,
      max: opts.max,
      tolerance: opts.tolerance ?? 2,
      smoothing: opts.smoothing ?? 0.2,
      longWindow: opts.longWindow ?? 600,
      shortWindow: opts.shortWindow ?? 10,
      backoff: opts.backoff ?? 0.9,
      queueDelayTarget: opts.queueDelayTarget ?? Number.POSITIVE_INFINITY,
    };
    this.current = Math.min(opts.max, Math.max(opts.min, opts.initial ?? opts.max));
    this.long = new MovingAverage(this.o.longWindow);
    this.short = new MovingAverage(this.o.shortWindow);
  }

  /** The limit, rounded down: what `tryAcquire` admits up to. */
  get limit(): number {
    return Math.floor(Math.min(this.current, this.queueCap));
  }

  get inFlight(): number {
    return this.used;
  }

  /**
   * Takes `units` when they fit under the limit, or when nothing but the caller's own `held`
   * units is in flight (work larger than the limit is never starved); false otherwise, nothing
   * taken.
   */
  tryAcquire(units: number, held = 0): boolean {
    if (!this.fits(units, held)) return false;
    this.used += units;
    return true;
  }

  /** Whether `tryAcquire(units, held)` would take them. */
  fits(units: number, held = 0): boolean {
    return this.used <= held || this.used + units <= this.limit;
  }

  /** Gives back `units` without a sample (work that was never measured). */
  release(units: number): void {
    this.used -= units;
  }

  /**
   * Gives back `units` and learns from the work's latency (`ok`), or from its failure. Samples
   * taken while less than half the limit was in use change nothing: such latency is not queueing
   * the limit could remove, and says nothing about a larger limit.
   */
  complete(units: number, latencyMs: number, ok: boolean): void {
    const inFlight = this.used;
    this.used -= units;
    if (!ok) {
      this.set(this.current * this.o.backoff);
      return;
    }
    const sample = Math.max(latencyMs, 0.001);
    this.long.add(sample);
    this.short.add(sample);
    const recent = this.short.current;
    let long = this.long.current;
    if (long / recent > 2) {
      this.long.scale(0.95);
      long = this.long.current;
    }
    if (inFlight < this.current / 2) return;
    const gradient = Math.max(0.5, Math.min(1, (this.o.tolerance * long) / recent));
    const next = this.current * gradient + Math.sqrt(this.current);
    this.set(this.current * (1 - this.o.smoothing) + next * this.o.smoothing);
  }

  /**
   * Learns from the standing delay (ms) that work waited before it could be admitted, one
   * interval's worth. Above the target the limit is capped at what is in flight times target over
   * delay (at most halved, never below `min`): the queue is the caller's own, which the latency of
   * admitted work does not measure; taken from what is in flight, the cap binds at once, however
   * far above it the limit was. Each interval under the target lets the cap grow by half, until it
   * no longer binds.
   */
  queueDelay(delayMs: number): void {
    const target = this.o.queueDelayTarget;
    if (delayMs > target) {
      const base = Math.min(this.current, this.queueCap, this.used);
      this.queueCap = Math.max(this.o.min, base * Math.max(0.5, target / delayMs));
    } else if (this.queueCap !== Number.POSITIVE_INFINITY) {
      this.queueCap *= QUEUE_CAP_GROWTH;
      if (this.queueCap >= this.current) this.queueCap = Number.POSITIVE_INFINITY;
    }
  }

  private set(limit: number): void {
    this.current = Math.min(this.o.max, Math.max(this.o.min, limit));
  }
}
