/**
 * The part of the `BROKER_*` settings every Kafka user shares: where the brokers are, the topic
 * names and their retention (Document 1 section 8, Document 2 sections 2, 6 and 8).
 *
 * | variable | default | meaning |
 * |---|---|---|
 * | `BROKER_BOOTSTRAP_SERVERS` | `localhost:9092` | comma-separated `host:port` list |
 * | `BROKER_TOPIC` | `events.cloudevents.v1` | the event topic |
 * | `BROKER_DLQ_TOPIC` | `<BROKER_TOPIC>.dlq` | the dead-letter topic |
 * | `BROKER_LOG_RETENTION_HOURS` | `168` | how long both topics keep records (`retention.ms`) |
 */
import { configProblem, custom, type Env, int, readConfig, str } from '@event-observatory/service-kit/config';

/** The spec's event topic, the default of `BROKER_TOPIC`. */
export const EVENT_TOPIC = 'events.cloudevents.v1';

/** The dead-letter topic that goes with an event topic: `<topic>.dlq`. */
export function deadLetterTopicName(topic: string): string {
  return `${topic}.dlq`;
}

/** The spec's dead-letter topic, the default of `BROKER_DLQ_TOPIC`. */
export const DEAD_LETTER_TOPIC = deadLetterTopicName(EVENT_TOPIC);

const TOPIC_NAME = { pattern: /^[A-Za-z0-9._-]{1,249}$/, hint: 'a Kafka topic name' };

function bootstrapList(raw: string): string[] {
  const items = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (items.length === 0 || !items.every((s) => /^[^\s:]+:\d{1,5}$/.test(s)))
    throw configProblem('expected a comma-separated list of host:port items');
  return items;
}

const connectionSchema = {
  bootstrapServers: custom('BROKER_BOOTSTRAP_SERVERS', bootstrapList).default('localhost:9092'),
  topic: str('BROKER_TOPIC', TOPIC_NAME).default(EVENT_TOPIC),
  dlqTopic: str('BROKER_DLQ_TOPIC', TOPIC_NAME).optional(),
  retentionHours: int('BROKER_LOG_RETENTION_HOURS', { min: 1 }).default(168),
};

/** Where the brokers are, and the topics (names and retention). */
export interface BrokerConnection {
  bootstrapServers: string[];
  /** The event topic. */
  topic: string;
  /** The dead-letter topic (`BROKER_DLQ_TOPIC`, else derived from `topic`). */
  dlqTopic: string;
  retentionHours: number;
}

/**
 * Reads and validates the shared `BROKER_*` variables; throws a one-line `ConfigError` naming the
 * variable.
 *
 * @example
 * ```ts
 * const { bootstrapServers, topic, dlqTopic } = readBrokerConnection(process.env);
 * ```
 */
export function readBrokerConnection(env: Env): BrokerConnection {
  const raw = readConfig(env, connectionSchema);
  return { ...raw, dlqTopic: raw.dlqTopic ?? deadLetterTopicName(raw.topic) };
}

/**
 * The connection from explicit values, the defaults for the rest (tests, tools); the dead-letter
 * topic follows `topic` unless given.
 */
export function brokerConnection(values: Partial<BrokerConnection> = {}): BrokerConnection {
  const defaults = readConfig({}, connectionSchema);
  const topic = values.topic ?? defaults.topic;
  return {
    bootstrapServers: values.bootstrapServers ?? defaults.bootstrapServers,
    topic,
    dlqTopic: values.dlqTopic ?? deadLetterTopicName(topic),
    retentionHours: values.retentionHours ?? defaults.retentionHours,
  };
}
