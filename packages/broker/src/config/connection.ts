/**
 * The `BROKER_*` settings more than one Kafka user shares: where the brokers are, the topic names
 * and their retention (the broker README's Settings table).
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

/** A comma-separated `host:port` list (bootstrap servers), for `custom` config fields. */
export function bootstrapList(raw: string): string[] {
  const items = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (items.length === 0 || !items.every((s) => /^[^\s:]+:\d{1,5}$/.test(s)))
    throw configProblem('expected a comma-separated list of host:port items');
  return items;
}

/**
 * Every shared `BROKER_*` variable, defined once; each reader takes the ones its user needs
 * (the producer: servers and topic; the consumer: servers and both topics; topic administration:
 * both topics and the retention).
 */
export const sharedFields = {
  bootstrapServers: custom('BROKER_BOOTSTRAP_SERVERS', bootstrapList).default('localhost:9092'),
  topic: str('BROKER_TOPIC', TOPIC_NAME).default(EVENT_TOPIC),
  dlqTopic: str('BROKER_DLQ_TOPIC', TOPIC_NAME).optional(),
  retentionHours: int('BROKER_LOG_RETENTION_HOURS', { min: 1 }).default(168),
};

/** `BROKER_DLQ_TOPIC` when set, else the dead-letter topic of `topic`. */
export function resolveDeadLetterTopic<T extends { topic: string; dlqTopic: string | undefined }>(
  raw: T,
): T & { dlqTopic: string } {
  return { ...raw, dlqTopic: raw.dlqTopic ?? deadLetterTopicName(raw.topic) };
}

/** The topics and how long they keep records: what topic administration needs. */
export interface BrokerTopics {
  /** The event topic. */
  topic: string;
  /** The dead-letter topic (`BROKER_DLQ_TOPIC`, else derived from `topic`). */
  dlqTopic: string;
  retentionHours: number;
}

const topicsSchema = {
  topic: sharedFields.topic,
  dlqTopic: sharedFields.dlqTopic,
  retentionHours: sharedFields.retentionHours,
};

/**
 * Reads and validates `BROKER_TOPIC`, `BROKER_DLQ_TOPIC` and `BROKER_LOG_RETENTION_HOURS`; throws a
 * one-line `ConfigError` naming the variable.
 *
 * @example
 * ```ts
 * await ensureTopics(admin, topicSpecs(readBrokerTopics(process.env)));
 * ```
 */
export function readBrokerTopics(env: Env): BrokerTopics {
  return resolveDeadLetterTopic(readConfig(env, topicsSchema));
}

/**
 * The topics from explicit values, the defaults for the rest (tests, tools); the dead-letter topic
 * follows `topic` unless given.
 */
export function brokerTopics(values: Partial<BrokerTopics> = {}): BrokerTopics {
  const defaults = readConfig({}, topicsSchema);
  return resolveDeadLetterTopic({
    topic: values.topic ?? defaults.topic,
    dlqTopic: values.dlqTopic,
    retentionHours: values.retentionHours ?? defaults.retentionHours,
  });
}
