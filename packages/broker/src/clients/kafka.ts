/**
 * The one place a kafkajs `Kafka` is constructed: brokers, client id, timeouts, retry and security
 * (TLS, SASL) come from checked settings, and kafkajs' log lines go to the service logger.
 */
import type { Logger } from '@event-observatory/service-kit/logger';
import {
  type ISocketFactory,
  Kafka,
  type KafkaConfig,
  type LogEntry,
  logLevel,
  type RetryOptions,
  type SASLOptions,
} from 'kafkajs';
import { type BrokerSecurity, PLAINTEXT, usesTls } from '../config/security.js';

export interface KafkaSettings {
  clientId: string;
  brokers: string[];
  connectionTimeout: number;
  requestTimeout: number;
  /** Fail a request at `requestTimeout` even if kafkajs would wait longer (kafkajs default false). */
  enforceRequestTimeout?: boolean;
  retry: RetryOptions;
  /** TLS and SASL (`readBrokerSecurity`); default PLAINTEXT. */
  security?: BrokerSecurity;
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

/** How long a kafkajs line stays "already said" after its last occurrence. */
const REPEAT_WINDOW_MS = 5 * 60_000;
/** kafkajs' wrapper around the connection error it has just logged itself. */
const SEED_BROKER_PREFIX = 'Failed to connect to seed broker, trying another broker from the list: ';
/** The broker's SASL error response; the authenticator's own line repeats its text. */
const SASL_RESPONSE = /^Response SaslAuthenticate\(/;

/** Per service logger (every client of a service shares it): each line's last occurrence. */
const lastSaid = new WeakMap<Logger, Map<string, number>>();

/**
 * True when `text` was logged through `logger` within the window (the window restarts at each
 * occurrence). A broker that refuses the password, or an unreachable one, fails every connect of
 * every new client the same way: that reason is logged once, not once per request or probe.
 */
function alreadySaid(logger: Logger, text: string, now = Date.now()): boolean {
  const seen = lastSaid.get(logger) ?? new Map<string, number>();
  lastSaid.set(logger, seen);
  const last = seen.get(text);
  seen.set(text, now);
  if (seen.size > 256) for (const [t, at] of seen) if (now - at >= REPEAT_WINDOW_MS) seen.delete(t);
  return last !== undefined && now - last < REPEAT_WINDOW_MS;
}

/**
 * Only the message and the error text of a kafkajs line are passed on, never the rest of its
 * fields (none of them carries the SASL settings today; this keeps it so).
 */
function forward(logger: Logger, muted: () => boolean) {
  return (entry: LogEntry) => {
    if (muted()) return;
    const message = entry.log.message;
    if (SASL_RESPONSE.test(message)) return;
    if (alreadySaid(logger, message.replace(SEED_BROKER_PREFIX, ''))) return;
    logger.warn({ kafkajs: entry.namespace, error: entry.log.error }, message);
  };
}

/**
 * kafkajs' `ssl` and `sasl` for `security`: TLS with the given PEM contents (the system's CAs
 * without a CA file), SASL with the mechanism's kafkajs name.
 */
export function kafkajsSecurity(security: BrokerSecurity): Pick<KafkaConfig, 'ssl' | 'sasl'> {
  const { protocol, sasl, tls } = security;
  return {
    ...(usesTls(protocol) && { ssl: tls ? { ...tls } : true }),
    ...(sasl && {
      sasl: {
        mechanism: sasl.mechanism.toLowerCase(),
        username: sasl.username,
        password: sasl.password,
      } as SASLOptions,
    }),
  };
}

/** A kafkajs client with `settings`; without a logger kafkajs logs nothing. */
export function createKafka(settings: KafkaSettings): Kafka {
  return newKafka(settings);
}

/** What a tool or a test says to reach Kafka: where, as whom, how secured, and any timeouts. */
export interface KafkaClientOptions {
  bootstrapServers: string[];
  clientId: string;
  /** TLS and SASL (`readBrokerSecurity`); default PLAINTEXT. */
  security?: BrokerSecurity;
  /** ms to open a connection (kafkajs: 1000). */
  connectionTimeout?: number;
  /** ms for one request (kafkajs: 30000). */
  requestTimeout?: number;
  /** kafkajs: 5 retries from 300 ms, up to 30 s in all. */
  retry?: RetryOptions;
}

/** The settings kafkajs has defaults for. */
type KafkajsDefaults = 'connectionTimeout' | 'requestTimeout' | 'retry';

/**
 * A kafkajs client for local tooling and tests (devstack, e2e, benchmarks), built as the services'
 * clients are (security settings, kafkajs' logs silenced) with kafkajs' own timeouts and retries
 * unless given.
 *
 * @example
 * ```ts
 * const admin = createKafkaClient({ bootstrapServers: ['127.0.0.1:9092'], clientId: 'tool' }).admin();
 * await admin.connect();
 * ```
 */
export function createKafkaClient({ bootstrapServers, ...rest }: KafkaClientOptions): Kafka {
  return newKafka({ brokers: bootstrapServers, ...rest });
}

function newKafka(
  settings: Omit<KafkaSettings, KafkajsDefaults> & Partial<Pick<KafkaSettings, KafkajsDefaults>>,
): Kafka {
  const { logger, muted = () => false, security = PLAINTEXT, ...rest } = settings;
  return new Kafka({
    ...rest,
    ...kafkajsSecurity(security),
    logLevel: logger ? kafkajsLevel(logger.level) : logLevel.NOTHING,
    logCreator: () => (logger ? forward(logger, muted) : () => {}),
  });
}
