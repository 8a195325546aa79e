/**
 * The `BROKER_*` settings only the consumer reads (Document 2 section 6), on top of the shared
 * connection.
 *
 * | variable | default | meaning |
 * |---|---|---|
 * | `BROKER_GROUP_ID` | `cobalt-cloudevents-v1` | consumer group; changing it replays the topic |
 * | `BROKER_CLIENT_ID` | `observatory-consumer` | kafkajs client id of the consumer's clients |
 */
import { type Env, readConfig, str } from '@event-observatory/service-kit/config';
import { type BrokerConnection, readBrokerConnection } from './connection.js';

const consumerSchema = {
  groupId: str('BROKER_GROUP_ID').default('cobalt-cloudevents-v1'),
  clientId: str('BROKER_CLIENT_ID').default('observatory-consumer'),
};

export interface ConsumerBrokerConfig extends BrokerConnection {
  groupId: string;
  clientId: string;
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
  return { ...readBrokerConnection(env), ...readConfig(env, consumerSchema) };
}
