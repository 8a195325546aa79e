/**
 * The consumer service's clients, built from its checked settings: one kafkajs client
 * (`BROKER_CLIENT_ID`, every request bounded by `LAG_REQUEST_TIMEOUT`), and from it the admin,
 * the dead-letter producer, the stream's group member and the short-lived dead-letter readers.
 */
import type { Logger } from '@event-observatory/service-kit/logger';
import { type Admin, type Consumer, Partitioners, type Producer } from 'kafkajs';
import type { ConsumerBrokerConfig } from '../config/consumer.js';
import { DEAD_LETTER_PRODUCER_PROPERTIES } from '../config/producer.js';
import { GroupMember, type GroupMemberSettings } from './group-member.js';
import { createKafka } from './kafka.js';

/** Connection and retry of every consumer-side client (kafkajs retries a failed request itself). */
const CONSUMER_CONNECTION = {
  connectionTimeout: 3_000,
  retry: { retries: 3, initialRetryTime: 200, maxRetryTime: 5_000 },
};

export interface ConsumerClientsOptions {
  /** Bound on one request (the consumer's `LAG_REQUEST_TIMEOUT`). */
  requestTimeoutMs: number;
  logger?: Logger;
}

export interface ConsumerClients {
  /** An admin client (lag, offsets, dead-letter depth, group resets). */
  admin(): Admin;
  /**
   * The dead-letter producer: not idempotent (a dead letter is keyed by its origin and the topic
   * is compacted, so a duplicate overwrites itself), one request in flight, no topic creation.
   * Its properties are `DEAD_LETTER_PRODUCER_PROPERTIES`; `DeadLetterProducer` sends with their `acks`.
   */
  deadLetterProducer(): Producer;
  /** A new member of the stream's group; after a crash the caller builds another. */
  groupMember(settings: GroupMemberSettings): GroupMember;
  /** A throw-away reader in its own group (dead-letter scans): short polls, few retries. */
  scanConsumer(groupId: string): Consumer;
}

/**
 * @example
 * ```ts
 * const clients = createConsumerClients(readConsumerBrokerConfig(process.env), { requestTimeoutMs: 5_000, logger });
 * const admin = clients.admin();
 * ```
 */
export function createConsumerClients(
  config: ConsumerBrokerConfig,
  opts: ConsumerClientsOptions,
): ConsumerClients {
  const kafka = createKafka({
    ...CONSUMER_CONNECTION,
    clientId: config.clientId,
    brokers: config.bootstrapServers,
    requestTimeout: opts.requestTimeoutMs,
    security: config.security,
    logger: opts.logger,
  });
  return {
    admin: () => kafka.admin(),
    deadLetterProducer: () => {
      const { acks: _sentWithEachRequest, ...properties } = DEAD_LETTER_PRODUCER_PROPERTIES;
      return kafka.producer({ ...properties, createPartitioner: Partitioners.DefaultPartitioner });
    },
    groupMember: (stream) => new GroupMember(kafka, { ...stream, sessionTimeoutMs: config.sessionTimeoutMs }),
    scanConsumer: (groupId) => kafka.consumer({ groupId, maxWaitTimeInMs: 100, retry: { retries: 2 } }),
  };
}
