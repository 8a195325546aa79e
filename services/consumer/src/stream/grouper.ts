/**
 * Groups records from concurrently consumed partitions into batches of up to `size` records,
 * waiting at most `windowMs` after the first record arrives. Each `submit` resolves when the
 * group that contains its records was processed, so the caller can then commit its partition's
 * offset. At most `maxInFlight` groups are processed at once; records submitted meanwhile wait
 * for the next group.
 */
import type { BatchResult } from '../write/processor.js';
import type { ConsumedRecord } from '../write/record.js';

interface Waiter {
  records: readonly ConsumedRecord[];
  resolve: (r: BatchResult) => void;
  reject: (e: unknown) => void;
}

export interface GrouperOptions {
  size: number;
  windowMs: number;
  maxInFlight?: number;
  flush: (records: ConsumedRecord[]) => Promise<BatchResult>;
}

export class BatchGrouper {
  private waiting: Waiter[] = [];
  private count = 0;
  private timer: NodeJS.Timeout | undefined;
  private due = false;
  private inFlight = 0;
  private sources = 0;
  private readonly maxInFlight: number;

  constructor(private readonly opts: GrouperOptions) {
    this.maxInFlight = opts.maxInFlight ?? 1;
  }

  /** Records must number at most `size`. */
  submit(records: readonly ConsumedRecord[]): Promise<BatchResult> {
    return new Promise((resolve, reject) => {
      if (this.count > 0 && this.count + records.length > this.opts.size) {
        this.due = true;
        this.tryFlush();
      }
      this.waiting.push({ records, resolve, reject });
      this.count += records.length;
      if (this.count >= this.opts.size) this.due = true;
      else if (!this.timer && !this.due) {
        this.timer = setTimeout(() => {
          this.timer = undefined;
          this.due = true;
          this.tryFlush();
        }, this.opts.windowMs);
      }
      this.tryFlush();
      this.checkSources();
    });
  }

  /**
   * A producer of submissions (one `eachBatch` call) starts or ends. When every active source has
   * a submission waiting, no more records can arrive before a flush, so the window is not waited.
   */
  sourceStarted(): void {
    this.sources++;
  }

  sourceFinished(): void {
    this.sources = Math.max(0, this.sources - 1);
    this.checkSources();
  }

  private checkSources(): void {
    if (this.sources > 0 && this.waiting.length >= this.sources) {
      this.due = true;
      this.tryFlush();
    }
  }

  /** Records waiting for a group. */
  get pending(): number {
    return this.count;
  }

  private tryFlush(): void {
    if (!this.due || this.waiting.length === 0 || this.inFlight >= this.maxInFlight) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    // Take whole submissions up to `size` records (a submission is never split).
    const group: Waiter[] = [];
    let n = 0;
    while (
      this.waiting.length > 0 &&
      (group.length === 0 || n + this.waiting[0]!.records.length <= this.opts.size)
    ) {
      const w = this.waiting.shift()!;
      group.push(w);
      n += w.records.length;
    }
    this.count -= n;
    this.due = this.count >= this.opts.size || (this.sources > 0 && this.waiting.length >= this.sources);
    if (this.count > 0 && !this.due) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.due = true;
        this.tryFlush();
      }, this.opts.windowMs);
    }
    this.inFlight++;
    this.opts
      .flush(group.flatMap((w) => w.records))
      .then(
        (result) => {
          for (const w of group) w.resolve(result);
        },
        (err) => {
          for (const w of group) w.reject(err);
        },
      )
      .finally(() => {
        this.inFlight--;
        this.tryFlush();
      });
  }
}
