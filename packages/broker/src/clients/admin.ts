/**
 * A standalone admin client for topic administration of any Kafka cluster (the Pipeline
 * controller: each Pipeline may name its own bootstrap servers).
 */
import type { Logger } from '@event-observatory/service-kit/logger';
import type { Admin } from 'kafkajs';
import type { BrokerSecurity } from '../config/security.js';
import { createKafka } from './kafka.js';

export interface AdminClientOptions {
  bootstrapServers: string[];
  clientId: string;
  /** Bound on one request; kafkajs fails the request at this bound. */
  requestTimeoutMs: number;
  /** TLS and SASL (`readBrokerSecurity`); default PLAINTEXT. */
  security?: BrokerSecurity;
  logger?: Logger;
}

/**
 * An admin client that fails fast (3 s to connect, 2 retries): its caller has a retry policy of its own.
 *
 * @example
 * ```ts
 * const admin = createAdminClient({ bootstrapServers: ['localhost:9092'], clientId: 'observatory-controller', requestTimeoutMs: 10_000 });
 * await admin.connect();
 * ```
 */
export function createAdminClient(opts: AdminClientOptions): Admin {
  return createKafka({
    clientId: opts.clientId,
    brokers: opts.bootstrapServers,
    connectionTimeout: 3_000,
    requestTimeout: opts.requestTimeoutMs,
    enforceRequestTimeout: true,
    retry: { retries: 2, initialRetryTime: 200, maxRetryTime: 2_000 },
    ...(opts.security && { security: opts.security }),
    logger: opts.logger,
  }).admin();
}
