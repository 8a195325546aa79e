/**
 * The `BROKER_*` settings of a topic-administration client (the Pipeline controller): the shared
 * bootstrap servers (`connection.ts`), the security settings (`security.ts`) and a client id.
 *
 * | variable | default | meaning |
 * |---|---|---|
 * | `BROKER_BOOTSTRAP_SERVERS` | `localhost:9092` | comma-separated `host:port` list |
 * | `BROKER_CLIENT_ID` | the caller's (e.g. `observatory-controller`) | kafkajs client id |
 */
import { type Env, readConfig, str } from '@event-observatory/service-kit/config';
import { sharedFields } from './connection.js';
import { type BrokerSecurity, readBrokerSecurity } from './security.js';

export interface AdminBrokerConfig {
  bootstrapServers: string[];
  clientId: string;
  /** TLS and SASL of every connection (`BROKER_SECURITY_PROTOCOL`, ...). */
  security: BrokerSecurity;
}

/**
 * @example
 * ```ts
 * readAdminBrokerConfig(process.env, 'observatory-controller'); // { bootstrapServers: ['localhost:9092'], clientId: ... }
 * ```
 */
export function readAdminBrokerConfig(env: Env, defaultClientId: string): AdminBrokerConfig {
  const own = readConfig(env, {
    bootstrapServers: sharedFields.bootstrapServers,
    clientId: str('BROKER_CLIENT_ID').default(defaultClientId),
  });
  return { ...own, security: readBrokerSecurity(env) };
}
