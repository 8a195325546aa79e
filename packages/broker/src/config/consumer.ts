/**
 * The consumer's `BROKER_*` settings (the broker README's Settings table): the shared servers and topics
 * (`connection.ts`), the security settings (`security.ts`) and its own group and client id.
 *
 * | variable | default | meaning |
 * |---|---|---|
 * | `BROKER_GROUP_ID` | `cobalt-cloudevents-v1` | consumer group; changing it replays the topic |
 * | `BROKER_CLIENT_ID` | `observatory-consumer` | kafkajs client id of the consumer's clients |
 * | `BROKER_SESSION_TIMEOUT` | `30s` | how long the group waits for a member that stopped heartbeating (a killed process) before its partitions move; 10s..30m |
 */
import { duration, type Env, readConfig, str } from '@event-observatory/service-kit/config';
import { resolveDeadLetterTopic, sharedFields } from './connection.js';
import { type BrokerSecurity, readBrokerSecurity } from './security.js';

const consumerSchema = {
  bootstrapServers: sharedFields.bootstrapServers,
  topic: sharedFields.topic,
  dlqTopic: sharedFields.dlqTopic,
  groupId: str('BROKER_GROUP_ID').default('cobalt-cloudevents-v1'),
  clientId: str('BROKER_CLIENT_ID').default('observatory-consumer'),
  // At least 10 s: the stream heartbeats every 3 s during a long write. At most the broker's
  // default group.max.session.timeout.ms (30 min).
  sessionTimeoutMs: duration('BROKER_SESSION_TIMEOUT', { min: 10_000, max: 1_800_000 }).default('30s'),
};

export interface ConsumerBrokerConfig {
  bootstrapServers: string[];
  /** The topic read. */
  topic: string;
  /** Where dead letters go (`BROKER_DLQ_TOPIC`, else `<topic>.dlq`). */
  dlqTopic: string;
  groupId: string;
  clientId: string;
  /** The group's session timeout (`BROKER_SESSION_TIMEOUT`). */
  sessionTimeoutMs: number;
  /** TLS and SASL of every connection (`BROKER_SECURITY_PROTOCOL`, ...). */
  security: BrokerSecurity;
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
  return { ...resolveDeadLetterTopic(readConfig(env, consumerSchema)), security: readBrokerSecurity(env) };
}
