/**
 * Secured client listeners beside the devstack broker's PLAINTEXT one: `SASL_SSL` (SCRAM-SHA-512
 * and SCRAM-SHA-256 users made when the storage is formatted) and `SSL` with client
 * authentication required (mutual TLS). The PLAINTEXT listener stays for local administration and
 * read-back, and the brokers talk to each other over it.
 *
 * The broker's key and certificate are PEM stores (`ssl.keystore.type=PEM`), issued per start by a
 * certificate authority of the run (`certificates.ts`, in `<dataDir>/tls`); the certificate names
 * the listener host (and 127.0.0.1, localhost) so clients verifying the host name accept it.
 * SCRAM passwords live in `<dataDir>/scram-users.json` (mode 0600): the users exist only in the
 * formatted storage, so a restart on the same data must find the same passwords.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { createCertificateAuthority, issueCertificate } from './certificates.js';

/** The SCRAM mechanisms every devstack user gets, with the same password. */
export const SCRAM_MECHANISMS = ['SCRAM-SHA-512', 'SCRAM-SHA-256'] as const;
export type ScramMechanism = (typeof SCRAM_MECHANISMS)[number];

export interface SecuredListenerOptions {
  /** SCRAM user names made at format time (random passwords); default `['observatory']`. */
  users?: string[];
  /** `SASL_SSL` port; 0 or absent picks a free port once. */
  saslSslPort?: number;
  /** `SSL` (mutual TLS) port; 0 or absent picks a free port once. */
  sslPort?: number;
}

export interface ScramUser {
  username: string;
  password: string;
}

/** What clients of the secured listeners need; plain data (a Vitest global setup can provide it). */
export interface SecuredListeners {
  /** `<host>:<port>` of the `SASL_SSL` listener (SCRAM-SHA-512 and SCRAM-SHA-256). */
  saslSsl: string;
  /** `<host>:<port>` of the `SSL` listener; a client certificate signed by `caFile` is required. */
  ssl: string;
  /** PEM certificate of the run's authority: what clients trust. */
  caFile: string;
  /** A client certificate and its key (PKCS#8) for the `SSL` listener. */
  clientCertFile: string;
  clientKeyFile: string;
  /** SCRAM users, each registered for both {@link SCRAM_MECHANISMS}. */
  users: ScramUser[];
}

/** The listener ports chosen, the users, and the files of one start. */
export interface SecuredPlan {
  saslSslPort: number;
  sslPort: number;
  host: string;
  users: ScramUser[];
  tlsDir: string;
}

const USERS_FILE = 'scram-users.json';

/**
 * The users of a data folder: those recorded at format time when the storage exists, else new
 * ones (recorded now, before formatting). A storage formatted without users cannot grow them here.
 */
export function scramUsers(dataDir: string, names: string[], formatted: boolean): ScramUser[] {
  const file = join(dataDir, USERS_FILE);
  if (existsSync(file)) {
    const recorded = JSON.parse(readFileSync(file, 'utf8')) as ScramUser[];
    const missing = names.filter((n) => !recorded.some((u) => u.username === n));
    if (missing.length === 0) return recorded.filter((u) => names.includes(u.username));
    if (formatted)
      throw new Error(`Kafka in ${dataDir} was formatted without SCRAM user(s) ${missing.join(', ')}`);
  } else if (formatted) {
    throw new Error(
      `Kafka in ${dataDir} was formatted without secured listeners (no ${USERS_FILE}); remove the folder to start it with them`,
    );
  }
  const users = names.map((username) => ({ username, password: randomBytes(18).toString('base64url') }));
  writeFileSync(file, JSON.stringify(users), { mode: 0o600 });
  return users;
}

/** `StorageTool format` arguments that create `users` for every SCRAM mechanism. */
export function addScramArgs(users: ScramUser[]): string[] {
  return users.flatMap((u) =>
    SCRAM_MECHANISMS.flatMap((m) => ['--add-scram', `${m}=[name=${u.username},password=${u.password}]`]),
  );
}

const SCRAM_LOGIN = 'org.apache.kafka.common.security.scram.ScramLoginModule required ;';

/**
 * Issues the run's authority, the broker's certificate and a client certificate; returns the broker
 * properties of both secured listeners (merged over `brokerSettings`' PLAINTEXT ones) and what
 * clients need.
 */
export function securedListeners(
  plan: SecuredPlan,
  plain: { listeners: string; advertised: string; protocolMap: string },
): { settings: Record<string, string>; listeners: SecuredListeners } {
  const ca = createCertificateAuthority(plan.tlsDir, 'devstack-kafka-ca');
  const ipAddresses = ['127.0.0.1', ...(isIP(plan.host) && plan.host !== '127.0.0.1' ? [plan.host] : [])];
  const dnsNames = ['localhost', ...(isIP(plan.host) ? [] : [plan.host])];
  const broker = issueCertificate(ca, { name: 'kafka', commonName: plan.host, dnsNames, ipAddresses });
  const client = issueCertificate(ca, { name: 'client', commonName: 'observatory-client', usage: 'client' });
  const saslSsl = `${plan.host}:${plan.saslSslPort}`;
  const ssl = `${plan.host}:${plan.sslPort}`;
  const settings: Record<string, string> = {
    listeners: `${plain.listeners},SASL_SSL://${saslSsl},SSL://${ssl}`,
    'advertised.listeners': `${plain.advertised},SASL_SSL://${saslSsl},SSL://${ssl}`,
    'listener.security.protocol.map': `${plain.protocolMap},SASL_SSL:SASL_SSL,SSL:SSL`,
    'ssl.keystore.type': 'PEM',
    'ssl.keystore.location': broker.keyAndCertFile,
    'ssl.truststore.type': 'PEM',
    'ssl.truststore.location': ca.certFile,
    'listener.name.ssl.ssl.client.auth': 'required',
    'sasl.enabled.mechanisms': SCRAM_MECHANISMS.join(','),
    ...Object.fromEntries(
      SCRAM_MECHANISMS.map((m) => [
        `listener.name.sasl_ssl.${m.toLowerCase()}.sasl.jaas.config`,
        SCRAM_LOGIN,
      ]),
    ),
  };
  return {
    settings,
    listeners: {
      saslSsl,
      ssl,
      caFile: ca.certFile,
      clientCertFile: client.certFile,
      clientKeyFile: client.keyFile,
      users: plan.users,
    },
  };
}

/**
 * The `BROKER_*` variables a service needs to reach `listener` of `secured` (`SASL_SSL` as the
 * first user with `mechanism`, or `SSL` with the client certificate).
 *
 * @example
 * ```ts
 * startServiceProcess({ env: { ...securedClientEnv(kafka.secured!, 'SASL_SSL') } });
 * ```
 */
export function securedClientEnv(
  secured: SecuredListeners,
  listener: 'SASL_SSL' | 'SSL',
  mechanism: ScramMechanism = 'SCRAM-SHA-512',
): Record<string, string> {
  if (listener === 'SSL')
    return {
      BROKER_BOOTSTRAP_SERVERS: secured.ssl,
      BROKER_SECURITY_PROTOCOL: 'SSL',
      BROKER_SSL_CA_FILE: secured.caFile,
      BROKER_SSL_CERT_FILE: secured.clientCertFile,
      BROKER_SSL_KEY_FILE: secured.clientKeyFile,
    };
  const user = secured.users[0];
  if (!user) throw new Error('the secured listeners have no SCRAM user');
  return {
    BROKER_BOOTSTRAP_SERVERS: secured.saslSsl,
    BROKER_SECURITY_PROTOCOL: 'SASL_SSL',
    BROKER_SASL_MECHANISM: mechanism,
    BROKER_SASL_USERNAME: user.username,
    BROKER_SASL_PASSWORD: user.password,
    BROKER_SSL_CA_FILE: secured.caFile,
  };
}
