/**
 * The consumer's `BROKER_*` settings (Document 2 section 6): the shared servers and topics
 * (`connection.ts`) and its own group and client id.
 *
 * | variable | default | meaning |
 * |---|---|---|
 * | `BROKER_GROUP_ID` | `cobalt-cloudevents-v1` | consumer group; changing it replays the topic |
 * | `BROKER_CLIENT_ID` | `observatory-consumer` | kafkajs client id of the consumer's clients |
 * | `KAFKA_CLIENT` | `kafkajs` | the library of the stream's group member: `kafkajs` or `platformatic` (`@platformatic/kafka`) |
 */
import { type Env, oneOf, readConfig, str } from '@event-observatory/service-kit/config';
import { resolveDeadLetterTopic, sharedFields } from './connection.js';

/** The Kafka libraries the consumer's group member can be built with. */
export const KAFKA_CLIENTS = ['kafkajs', 'platformatic'] as const;
export type KafkaClientName = (typeof KAFKA_CLIENTS)[number];

const consumerSchema = {
  bootstrapServers: sharedFields.bootstrapServers,
  topic: sharedFields.topic,
  dlqTopic: sharedFields.dlqTopic,
  groupId: str('BROKER_GROUP_ID').default('cobalt-cloudevents-v1'),
  clientId: str('BROKER_CLIENT_ID').default('observatory-consumer'),
  kafkaClient: oneOf('KAFKA_CLIENT', KAFKA_CLIENTS).default('kafkajs'),
};

export interface ConsumerBrokerConfig {
  bootstrapServers: string[];
  /** The topic read. */
  topic: string;
  /** Where dead letters go (`BROKER_DLQ_TOPIC`, else `<topic>.dlq`). */
  dlqTopic: string;
  groupId: string;
  clientId: string;
  /** The library of the stream's group member (`KAFKA_CLIENT`); admin, dead letters and scans stay on kafkajs. */
  kafkaClient: KafkaClientName;
}

/**
 * Reads the connection and the consumer's own `BROKER_*` variables.
 *
 * @example
 * ```ts
 * const broker = readConsumerBrokerConfig(process.env);
 * broker.groupId; // 'cobalt-cloudevents-v1'
 * ```
 */
export function readConsumerBrokerConfig(env: Env): ConsumerBrokerConfig {
  return resolveDeadLetterTopic(readConfig(env, consumerSchema));
}
