import { Gauge, Histogram, type LabelValues, type Registry, Summary } from 'prom-client';

/** Milliseconds clock; tests pass their own. */
export type Clock = () => number;

/**
 * The largest value seen over a sliding window, as Micrometer's `TimeWindowMax`: the window
 * (default 2 minutes) is split into `slots` (default 3) rotating sub-windows, so a spike stays
 * visible for at least `windowMs - windowMs / slots` and at most `windowMs`.
 */
export class WindowMax {
  private readonly slots: number[];
  private current = 0;
  private rotatedAt: number;
  private readonly slotMs: number;

  constructor(
    private readonly clock: Clock = Date.now,
    windowMs = 120_000,
    slots = 3,
  ) {
    this.slots = new Array<number>(slots).fill(0);
    this.slotMs = windowMs / slots;
    this.rotatedAt = clock();
  }

  record(value: number): void {
    this.rotate();
    for (let i = 0; i < this.slots.length; i++) if (value > this.slots[i]!) this.slots[i] = value;
  }

  /** The max over the window (0 when nothing was recorded in it). */
  poll(): number {
    this.rotate();
    return this.slots[this.current]!;
  }

  private rotate(): void {
    const elapsed = this.clock() - this.rotatedAt;
    if (elapsed < this.slotMs) return;
    const steps = Math.min(this.slots.length, Math.floor(elapsed / this.slotMs));
    for (let i = 0; i < steps; i++) {
      this.slots[this.current] = 0;
      this.current = (this.current + 1) % this.slots.length;
    }
    this.rotatedAt += Math.floor(elapsed / this.slotMs) * this.slotMs;
  }
}

export interface DistributionOptions<L extends string> {
  /** Full Prometheus name, unit included (`broker_produce_latency_seconds`, `ingest_payload_bytes`). */
  name: string;
  help: string;
  labelNames?: readonly L[];
  /** Bucket ladder (see `ladders`); without one only `_count`, `_sum` and `_max` are published. */
  buckets?: readonly number[];
  /** Clock for the `_max` window; default `Date.now`. */
  clock?: Clock;
}

/**
 * A Micrometer-style distribution in Prometheus spelling: `<name>_count`, `<name>_sum`,
 * `<name>_max` (the max over the last 2 minutes), and `<name>_bucket` when a ladder is given.
 */
export interface Distribution<L extends string> {
  observe(labels: LabelValues<L>, value: number): void;
  /** Pre-creates a series at zero so it is scraped before its first sample. */
  zero(labels: LabelValues<L>): void;
}

/** A distribution of durations in seconds, with a stopwatch. */
export interface Timer<L extends string> extends Distribution<L> {
  /** Starts a stopwatch; calling the result records the elapsed seconds (and returns them). */
  start(labels?: LabelValues<L>): (more?: LabelValues<L>) => number;
}

/**
 * A distribution summary with buckets (Micrometer's DistributionSummary), registered on `registry`.
 *
 * @example
 * ```ts
 * const payload = createDistribution(registry, {
 *   name: 'ingest_payload_bytes', help: 'Body size of accepted requests',
 *   labelNames: ['mode'], buckets: ladders.payloadBytes,
 * });
 * payload.observe({ mode: 'binary' }, body.byteLength);
 * ```
 */
export function createDistribution<L extends string = never>(
  registry: Registry,
  opts: DistributionOptions<L>,
): Distribution<L> {
  const labelNames = [...(opts.labelNames ?? [])] as L[];
  const base = opts.buckets
    ? new Histogram<L>({
        name: opts.name,
        help: opts.help,
        labelNames,
        buckets: [...opts.buckets],
        registers: [registry],
      })
    : new Summary<L>({
        name: opts.name,
        help: opts.help,
        labelNames,
        percentiles: [],
        registers: [registry],
      });
  const maxima = new Map<string, { labels: LabelValues<L>; max: WindowMax }>();
  const clock = opts.clock ?? Date.now;
  new Gauge<L>({
    name: `${opts.name}_max`,
    help: `${opts.help} (maximum over the last 2 minutes)`,
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      for (const { labels, max } of maxima.values()) this.set(labels, max.poll());
    },
  });
  const maxFor = (labels: LabelValues<L>): WindowMax => {
    const key = labelKey(labels);
    let entry = maxima.get(key);
    if (!entry) {
      entry = { labels: { ...labels }, max: new WindowMax(clock) };
      maxima.set(key, entry);
    }
    return entry.max;
  };
  // Hot path: one lookup per label set, keyed by the values in `labelNames` order (cheaper than
  // sorting and serialising the object each time); the entry keeps the prom-client child and the
  // window max, so an observation does no label hashing of ours. Label sets with keys outside
  // `labelNames` (prom-client refuses them) take the general path.
  const fast = new Map<string, { observe: (value: number) => void; max: WindowMax }>();
  const fastKey = (labels: LabelValues<L>): string | undefined => {
    let key = '';
    let seen = 0;
    for (const name of labelNames) {
      const v = (labels as Record<string, string | number | undefined>)[name];
      if (v !== undefined) seen++;
      key += v === undefined ? '\u0000\u0001' : `${v}\u0001`;
    }
    let given = 0;
    for (const k in labels) if (Object.hasOwn(labels, k)) given++;
    return seen === given ? key : undefined;
  };
  return {
    observe(labels, value) {
      const key = fastKey(labels);
      if (key === undefined) {
        base.observe(labels, value);
        maxFor(labels).record(value);
        return;
      }
      let entry = fast.get(key);
      if (!entry) {
        const child = base.labels(labels);
        entry = { observe: (v: number) => child.observe(v), max: maxFor(labels) };
        fast.set(key, entry);
      }
      entry.observe(value);
      entry.max.record(value);
    },
    zero(labels) {
      if (base instanceof Histogram) base.zero(labels);
      else base.labels(labels);
      maxFor(labels);
    },
  };
}

/**
 * A timer (seconds) with `_count`, `_sum`, `_max` and, with a ladder, `_bucket`.
 *
 * @example
 * ```ts
 * const produce = createTimer(registry, {
 *   name: 'broker_produce_latency_seconds', help: 'Acknowledgement latency',
 *   labelNames: ['topic', 'outcome'], buckets: ladders.brokerProduce,
 * });
 * const stop = produce.start({ topic });
 * await send();
 * stop({ outcome: 'success' });
 * ```
 */
export function createTimer<L extends string = never>(
  registry: Registry,
  opts: DistributionOptions<L>,
): Timer<L> {
  const dist = createDistribution(registry, opts);
  return {
    ...dist,
    start(labels) {
      const started = process.hrtime.bigint();
      return (more) => {
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        dist.observe({ ...labels, ...more } as LabelValues<L>, seconds);
        return seconds;
      };
    },
  };
}

function labelKey(labels: object): string {
  return JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
