/**
 * The event producer's settings from the environment: the shared `BROKER_BOOTSTRAP_SERVERS` and
 * `BROKER_TOPIC` (`connection.ts`), the security settings (`security.ts`), the producer's own `BROKER_*` variables (the broker README's Settings table) and the free-form producer
 * overrides, validated at start-up.
 *
 * | variable | default | meaning |
 * |---|---|---|
 * | `BROKER_MAX_BLOCK` | `2s` | bound on connecting and fetching topic metadata before a send |
 * | `BROKER_DELIVERY_TIMEOUT` | `10s` | bound on a whole send from hand-over to acknowledgement, retries included |
 * | `BROKER_REQUEST_TIMEOUT` | `5s` | one produce round trip |
 * | `BROKER_LINGER` | `5ms` | how long a record may wait for more to join its send (Kafka's `linger.ms`; 5 ms is its default since Kafka 4.0) |
 * | `BROKER_CLOSE_TIMEOUT` | `10s` | drain window at shutdown |
 * | `BROKER_QUEUE_CAPACITY` | `1024` | records queued or in flight; beyond it publishing is refused |
 * | `BROKER_PROBE_INTERVAL` | `5s` | period of the readiness probe |
 * | `BROKER_PRODUCER_OVERRIDES` | (empty) | `key=value,...` producer properties, merged under the fixed defaults |
 *
 * Start-up refuses `BROKER_DELIVERY_TIMEOUT < BROKER_LINGER + BROKER_REQUEST_TIMEOUT`.
 *
 * Overridable properties: `clientId`, `connectionTimeout` (ms), `metadataMaxAge` (ms),
 * `compression` (`none` or `gzip`), `maxBatchBytes` (bytes per produce request, each record's framing counted),
 * `initialRetryTime` (ms), `maxRetryTime` (ms). Fixed and never overridable (an override naming
 * them is ignored and reported in `ignoredOverrides`): `acks` (all replicas, -1), `idempotent`
 * (true), `maxInFlightRequests` (1), `allowAutoTopicCreation` (false). Any other key is a
 * configuration error.
 */
import {
  ConfigError,
  type ConfigOf,
  configProblem,
  custom,
  duration,
  type Env,
  int,
  readConfig,
} from '@event-observatory/service-kit/config';
import { sharedFields } from './connection.js';
import { type BrokerSecurity, PLAINTEXT, readBrokerSecurity } from './security.js';

/** Properties that keep durability and ordering; overrides cannot change them. */
export const FIXED_PRODUCER_PROPERTIES = {
  acks: -1,
  idempotent: true,
  maxInFlightRequests: 1,
  allowAutoTopicCreation: false,
} as const;

/**
 * The dead-letter producer's properties: the event producer's, but not idempotent. A dead letter is
 * keyed by its origin and the dead-letter topic is compacted, so a duplicate overwrites itself.
 */
export const DEAD_LETTER_PRODUCER_PROPERTIES = { ...FIXED_PRODUCER_PROPERTIES, idempotent: false } as const;

/** Producer properties a deployment may override, with their defaults. */
export interface ProducerProperties {
  clientId: string;
  connectionTimeout: number;
  metadataMaxAge: number;
  compression: 'none' | 'gzip';
  maxBatchBytes: number;
  initialRetryTime: number;
  maxRetryTime: number;
}

export const DEFAULT_PRODUCER_PROPERTIES: ProducerProperties = {
  clientId: 'event-observatory-ingest',
  connectionTimeout: 1000,
  metadataMaxAge: 300_000,
  compression: 'none',
  maxBatchBytes: 1_000_000,
  initialRetryTime: 100,
  maxRetryTime: 1000,
};

interface ParsedOverrides {
  properties: Partial<ProducerProperties>;
  ignored: string[];
}

function positiveInt(key: string, raw: string): number {
  if (!/^\d+$/.test(raw) || Number(raw) <= 0)
    throw configProblem(`override ${key} must be a positive integer`);
  return Number(raw);
}

function parseOverrides(raw: string): ParsedOverrides {
  const out: ParsedOverrides = { properties: {}, ignored: [] };
  for (const item of raw.split(',')) {
    const trimmed = item.trim();
    if (trimmed === '') continue;
    const eq = trimmed.indexOf('=');
    if (eq <= 0)
      throw configProblem(`expected key=value pairs separated by commas (at ${JSON.stringify(trimmed)})`);
    const key = trimmed.slice(0, eq).trim();
    const value = trimmed.slice(eq + 1).trim();
    if (key in FIXED_PRODUCER_PROPERTIES) {
      out.ignored.push(key);
      continue;
    }
    switch (key) {
      case 'clientId':
        if (value === '') throw configProblem('override clientId must not be empty');
        out.properties.clientId = value;
        break;
      case 'compression':
        if (value !== 'none' && value !== 'gzip')
          throw configProblem('override compression must be none or gzip');
        out.properties.compression = value;
        break;
      case 'connectionTimeout':
      case 'metadataMaxAge':
      case 'maxBatchBytes':
      case 'initialRetryTime':
      case 'maxRetryTime':
        out.properties[key] = positiveInt(key, value);
        break;
      default:
        throw configProblem(`unknown producer property ${JSON.stringify(key)}`);
    }
  }
  return out;
}

const producerSchema = {
  bootstrapServers: sharedFields.bootstrapServers,
  topic: sharedFields.topic,
  maxBlockMs: duration('BROKER_MAX_BLOCK', { min: 1 }).default('2s'),
  deliveryTimeoutMs: duration('BROKER_DELIVERY_TIMEOUT', { min: 1 }).default('10s'),
  requestTimeoutMs: duration('BROKER_REQUEST_TIMEOUT', { min: 1 }).default('5s'),
  lingerMs: duration('BROKER_LINGER').default('5ms'),
  closeTimeoutMs: duration('BROKER_CLOSE_TIMEOUT').default('10s'),
  queueCapacity: int('BROKER_QUEUE_CAPACITY', { min: 1 }).default(1024),
  // Not in the spec: records count, but 1,024 records of 1 MiB would hold a gigabyte of payloads.
  queueBytes: int('BROKER_QUEUE_BYTES', { min: 1 }).default(128 * 1024 * 1024),
  probeIntervalMs: duration('BROKER_PROBE_INTERVAL', { min: 100 }).default('5s'),
  overrides: custom('BROKER_PRODUCER_OVERRIDES', parseOverrides).default({ properties: {}, ignored: [] }),
};

type Raw = ConfigOf<typeof producerSchema>;

/** Validated producer configuration. */
export interface ProducerConfig extends Omit<Raw, 'overrides'> {
  /** Overridable properties after merging the overrides over their defaults. */
  producer: ProducerProperties;
  /** Override keys that named a fixed property and were ignored (log them at start-up). */
  ignoredOverrides: string[];
  /** TLS and SASL of every connection (`BROKER_SECURITY_PROTOCOL`, ...). */
  security: BrokerSecurity;
}

/**
 * Reads and validates the connection and the producer's `BROKER_*` variables; throws a one-line
 * `ConfigError` naming the variable.
 *
 * @example
 * ```ts
 * const config = readProducerConfig(process.env);
 * config.deliveryTimeoutMs; // 10000
 * ```
 */
export function readProducerConfig(env: Env): ProducerConfig {
  return finish(readConfig(env, producerSchema), readBrokerSecurity(env));
}

/**
 * A configuration from explicit values, the defaults for the rest (tests, benchmarks); checked
 * like the environment.
 */
export function producerConfig(
  values: Partial<Raw> & { bootstrapServers: string[]; security?: BrokerSecurity },
): ProducerConfig {
  const { security = PLAINTEXT, ...rest } = values;
  return finish({ ...readConfig({}, producerSchema), ...rest }, security);
}

/** Applies the cross-field rule and merges the overrides over their defaults. */
function finish(raw: Raw, security: BrokerSecurity): ProducerConfig {
  if (raw.deliveryTimeoutMs < raw.lingerMs + raw.requestTimeoutMs) {
    throw new ConfigError(
      'BROKER_DELIVERY_TIMEOUT',
      `must be at least BROKER_LINGER + BROKER_REQUEST_TIMEOUT (${raw.lingerMs}ms + ${raw.requestTimeoutMs}ms), got ${raw.deliveryTimeoutMs}ms`,
    );
  }
  const { overrides, ...rest } = raw;
  return {
    ...rest,
    producer: { ...DEFAULT_PRODUCER_PROPERTIES, ...overrides.properties },
    ignoredOverrides: overrides.ignored,
    security,
  };
}

/**
 * Retries of the client's own requests (connecting, metadata, the producer id): as many attempts
 * (each bounded by the request timeout, separated by at most `maxRetryTime`) as fit in the delivery
 * timeout, at least 1. A broker that refuses the connection (a wrong password, an untrusted
 * certificate, a listener that wants TLS) is reported quickly, under one reason.
 */
export function clientRetries(config: ProducerConfig): number {
  const per = config.requestTimeoutMs + config.producer.maxRetryTime;
  return Math.max(1, Math.floor((config.deliveryTimeoutMs - config.requestTimeoutMs) / per));
}

/**
 * Retries of one send inside kafkajs: as many as their backoffs (from `initialRetryTime`, doubling,
 * at most `maxRetryTime` each) fit in the delivery timeout less one request timeout, at least 1
 * (kafkajs refuses 0 for an idempotent producer). A quick error that passes (a partition's leader
 * moving, a topic's leaders still being elected) is ridden out for seconds, as the Java producer
 * does; one that persists (too few in-sync replicas) is answered as that broker error before the
 * deadline fence, which ends whatever is left of a send that hangs.
 */
export function sendRetries(config: ProducerConfig): number {
  const budget = config.deliveryTimeoutMs - config.requestTimeoutMs;
  const { initialRetryTime, maxRetryTime } = config.producer;
  let retries = 0;
  let waited = 0;
  for (
    let backoff = initialRetryTime;
    waited + backoff < budget;
    backoff = Math.min(backoff * 2, maxRetryTime)
  ) {
    waited += backoff;
    retries += 1;
  }
  return Math.max(1, retries);
}
