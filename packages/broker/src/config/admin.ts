/**
 * The `BROKER_*` settings of a topic-administration client (the Pipeline controller): the shared
 * bootstrap servers (`connection.ts`) and a client id.
 *
 * | variable | default | meaning |
 * |---|---|---|
 * | `BROKER_BOOTSTRAP_SERVERS` | `localhost:9092` | comma-separated `host:port` list |
 * | `BROKER_CLIENT_ID` | the caller's (e.g. `observatory-controller`) | kafkajs client id |
 */
import { type Env, readConfig, str } from '@event-observatory/service-kit/config';
import { sharedFields } from './connection.js';

export interface AdminBrokerConfig {
  bootstrapServers: string[];
  clientId: string;
}

/**
 * @example
 * ```ts
 * readAdminBrokerConfig(process.env, 'observatory-controller'); // { bootstrapServers: ['localhost:9092'], clientId: ... }
 * ```
 */
export function readAdminBrokerConfig(env: Env, defaultClientId: string): AdminBrokerConfig {
  return readConfig(env, {
    bootstrapServers: sharedFields.bootstrapServers,
    clientId: str('BROKER_CLIENT_ID').default(defaultClientId),
  });
}
