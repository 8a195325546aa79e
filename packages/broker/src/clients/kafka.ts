/**
 * The one place a kafkajs `Kafka` is constructed: brokers, client id, timeouts and retry come from
 * checked settings, and kafkajs' log lines go to the service logger.
 */
import type { Logger } from '@event-observatory/service-kit/logger';
import { type ISocketFactory, Kafka, type LogEntry, logLevel, type RetryOptions } from 'kafkajs';

export interface KafkaSettings {
  clientId: string;
  brokers: string[];
  connectionTimeout: number;
  requestTimeout: number;
  /** Fail a request at `requestTimeout` even if kafkajs would wait longer (kafkajs default false). */
  enforceRequestTimeout?: boolean;
  retry: RetryOptions;
  socketFactory?: ISocketFactory;
  logger?: Logger | undefined;
  /** While true, kafkajs log lines are dropped (a fenced producer's expected errors). */
  muted?: () => boolean;
}

/**
 * kafkajs' errors are the service's warnings: kafkajs retries most of them itself (a leader moved, a
 * coordinator changed), and what finally fails reaches the service, which logs it in its own words.
 * So they are logged when the service logs warnings, and kafkajs' chattier levels never.
 */
function kafkajsLevel(serviceLevel: string | undefined): logLevel {
  return serviceLevel === 'silent' || serviceLevel === 'fatal' || serviceLevel === 'error'
    ? logLevel.NOTHING
    : logLevel.ERROR;
}

function forward(logger: Logger, muted: () => boolean) {
  return (entry: LogEntry) => {
    if (muted()) return;
    logger.warn({ kafkajs: entry.namespace, error: entry.log.error }, entry.log.message);
  };
}

/** A kafkajs client with `settings`; without a logger kafkajs logs nothing. */
export function createKafka(settings: KafkaSettings): Kafka {
  const { logger, muted = () => false, ...rest } = settings;
  return new Kafka({
    ...rest,
    logLevel: logger ? kafkajsLevel(logger.level) : logLevel.NOTHING,
    logCreator: () => (logger ? forward(logger, muted) : () => {}),
  });
}
