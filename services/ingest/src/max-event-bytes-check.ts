/**
 * `INGEST_MAX_EVENT_BYTES` against the event topic's `max.message.bytes` (the API, not the
 * broker, refuses an oversized event). The limit is read at start, where events that do not
 * fit stop the service, and again every `BROKER_PROBE_INTERVAL` for readiness, since the topic
 * can be changed under a running service.
 */
import {
  type MaxEventBytesFit,
  type MessageLimitReader,
  maxEventBytesFit,
  RECORD_OVERHEAD_BYTES,
} from '@event-observatory/broker';
import { ConfigError } from '@event-observatory/service-kit/config';
import { type CheckResult, down, up } from '@event-observatory/service-kit/health';

/** The one-line refusal, naming both numbers and both settings. */
function misfit(fit: MaxEventBytesFit, topic: string): ConfigError {
  return new ConfigError(
    'INGEST_MAX_EVENT_BYTES',
    `${fit.maxEventBytes} does not fit topic ${topic}, whose max.message.bytes is ${fit.maxMessageBytes} ` +
      `(${RECORD_OVERHEAD_BYTES} bytes are kept for the key, headers and framing of a record): lower ` +
      `INGEST_MAX_EVENT_BYTES to at most ${fit.largestEventBytes} or raise the topic's max.message.bytes ` +
      `to at least ${fit.requiredMessageBytes}`,
  );
}

export interface MaxEventBytesCheckOptions {
  /** `INGEST_MAX_EVENT_BYTES`. */
  maxEventBytes: number;
  topic: string;
  limit: MessageLimitReader;
  /** Period of the readiness re-check (`BROKER_PROBE_INTERVAL`). */
  intervalMs: number;
}

/** Checks that an event of `INGEST_MAX_EVENT_BYTES` fits the topic's limit, at start and periodically. */
export class MaxEventBytesCheck {
  /** Undefined until a read succeeded. */
  private fit: MaxEventBytesFit | undefined;
  private checking: Promise<ConfigError | undefined> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: MaxEventBytesCheckOptions) {}

  /**
   * Reads the topic's limit now and answers the misfit, if any. A failed read keeps the last
   * verdict: an unreachable broker is the broker check's to report. Concurrent calls share a read.
   */
  check(): Promise<ConfigError | undefined> {
    this.checking ??= this.read().finally(() => {
      this.checking = undefined;
    });
    return this.checking;
  }

  /** Re-checks every `intervalMs` until `close`. */
  start(): void {
    this.timer ??= setInterval(() => void this.check(), this.opts.intervalMs);
    this.timer.unref();
  }

  /** The readiness check: DOWN, naming the problem, while the events do not fit. */
  readiness(): CheckResult {
    if (!this.fit) return up('unchecked');
    return this.fit.fits ? up('fits') : down(misfit(this.fit, this.opts.topic).message);
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.opts.limit.close();
  }

  private async read(): Promise<ConfigError | undefined> {
    try {
      this.fit = maxEventBytesFit(this.opts.maxEventBytes, await this.opts.limit.read());
    } catch {
      // keep the last verdict
    }
    return this.fit && !this.fit.fits ? misfit(this.fit, this.opts.topic) : undefined;
  }
}
