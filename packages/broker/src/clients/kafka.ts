/**
 * The one place a kafkajs `Kafka` is constructed: brokers, client id, timeouts and retry come from
 * checked settings, and kafkajs' log lines go to the service logger.
 */
import { type ISocketFactory, Kafka, type LogEntry, logLevel, type RetryOptions } from 'kafkajs';

/** What the broker package logs through (a pino logger fits). */
export interface BrokerLogger {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  /** The logger's level (pino's `level`); it sets how much kafkajs logs. */
  level?: string;
}

export interface KafkaSettings {
  clientId: string;
  brokers: string[];
  connectionTimeout: number;
  requestTimeout: number;
  /** Fail a request at `requestTimeout` even if kafkajs would wait longer (kafkajs default false). */
  enforceRequestTimeout?: boolean;
  retry: RetryOptions;
  socketFactory?: ISocketFactory;
  logger?: BrokerLogger | undefined;
  /** While true, kafkajs log lines are dropped (a fenced producer generation's expected errors). */
  muted?: () => boolean;
}

/**
 * kafkajs' level for a service log level: its errors always (they are the broker's side of a
 * failure the service reports), its chatty info lines only when the service debugs.
 */
function kafkajsLevel(level: string | undefined): logLevel {
  if (level === 'silent') return logLevel.NOTHING;
  if (level === 'debug' || level === 'trace') return logLevel.INFO;
  return logLevel.ERROR;
}

function forward(logger: BrokerLogger, muted: () => boolean) {
  return (entry: LogEntry) => {
    if (muted()) return;
    const { message, ...fields } = entry.log;
    const obj = { kafkajs: entry.namespace, ...fields };
    if (entry.level === logLevel.ERROR) logger.error(obj, message);
    else if (entry.level === logLevel.WARN) logger.warn(obj, message);
    else logger.info(obj, message);
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
