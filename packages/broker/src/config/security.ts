/**
 * How every Kafka connection authenticates and encrypts: the `BROKER_*` security variables, named
 * after Kafka's own client properties (`security.protocol`, `sasl.mechanism`, `ssl.*`), shared by
 * every component (ingest, consumer, controller) and every client they make.
 *
 * | variable | default | meaning |
 * |---|---|---|
 * | `BROKER_SECURITY_PROTOCOL` | `PLAINTEXT` | `PLAINTEXT`, `SSL`, `SASL_PLAINTEXT` or `SASL_SSL` |
 * | `BROKER_SASL_MECHANISM` | (none) | `PLAIN`, `SCRAM-SHA-256` or `SCRAM-SHA-512`; required with a `SASL_*` protocol |
 * | `BROKER_SASL_USERNAME` | (none) | required with a `SASL_*` protocol |
 * | `BROKER_SASL_PASSWORD` | (none) | the password; or `BROKER_SASL_PASSWORD_FILE`, not both |
 * | `BROKER_SASL_PASSWORD_FILE` | (none) | a file holding the password (a mounted Secret; a final line break is dropped) |
 * | `BROKER_SSL_CA_FILE` | the system's CAs | PEM bundle of the authorities to trust (`SSL`, `SASL_SSL`) |
 * | `BROKER_SSL_CERT_FILE` | (none) | PEM client certificate (mutual TLS); with `BROKER_SSL_KEY_FILE` |
 * | `BROKER_SSL_KEY_FILE` | (none) | its PEM private key (unencrypted); with `BROKER_SSL_CERT_FILE` |
 *
 * Files are read once, at start-up. Any inconsistent set refuses to start with one line naming a
 * variable; a password never appears in such a line.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ConfigError, type Env, oneOf, readConfig, str } from '@event-observatory/service-kit/config';

export const SECURITY_PROTOCOLS = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'] as const;
export type SecurityProtocol = (typeof SECURITY_PROTOCOLS)[number];

export const SASL_MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'] as const;
export type SaslMechanism = (typeof SASL_MECHANISMS)[number];

export interface BrokerSecurity {
  protocol: SecurityProtocol;
  /** Present exactly for the `SASL_*` protocols. */
  sasl?: { mechanism: SaslMechanism; username: string; password: string };
  /** PEM contents, already read; present for `SSL` and `SASL_SSL` only when a file was named. */
  tls?: { ca?: string; cert?: string; key?: string };
}

/** No encryption, no login: Kafka's default and the devstack's PLAINTEXT listener. */
export const PLAINTEXT: BrokerSecurity = { protocol: 'PLAINTEXT' };

/** Whether `protocol` encrypts (`SSL`, `SASL_SSL`). */
export function usesTls(protocol: SecurityProtocol): boolean {
  return protocol === 'SSL' || protocol === 'SASL_SSL';
}

/** Whether `protocol` logs in (`SASL_PLAINTEXT`, `SASL_SSL`). */
export function usesSasl(protocol: SecurityProtocol): boolean {
  return protocol.startsWith('SASL_');
}

const schema = {
  protocol: oneOf('BROKER_SECURITY_PROTOCOL', SECURITY_PROTOCOLS).default('PLAINTEXT'),
  mechanism: oneOf('BROKER_SASL_MECHANISM', SASL_MECHANISMS).optional(),
  username: str('BROKER_SASL_USERNAME').optional(),
  password: str('BROKER_SASL_PASSWORD').secret().optional(),
  passwordFile: str('BROKER_SASL_PASSWORD_FILE').optional(),
  caFile: str('BROKER_SSL_CA_FILE').optional(),
  certFile: str('BROKER_SSL_CERT_FILE').optional(),
  keyFile: str('BROKER_SSL_KEY_FILE').optional(),
};

/** The text of the file `variable` names, or a one-line error naming the variable. */
function readNamedFile(variable: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw new ConfigError(variable, `cannot read ${JSON.stringify(path)} (${code})`);
  }
}

/** The PEM in `variable`'s file, checked to parse as what it should hold. */
function readPem(variable: string, path: string, kind: 'certificate' | 'private key'): string {
  const pem = readNamedFile(variable, path);
  try {
    if (kind === 'certificate') new X509Certificate(pem);
    else createPrivateKey(pem);
  } catch {
    throw new ConfigError(variable, `${JSON.stringify(path)} holds no PEM ${kind} (an unencrypted one)`);
  }
  return pem;
}

function need(variable: string, value: string | undefined, protocol: SecurityProtocol): string {
  if (value === undefined)
    throw new ConfigError(variable, `is required with BROKER_SECURITY_PROTOCOL=${protocol}`);
  return value;
}

function refuse(variable: string, protocol: SecurityProtocol, uses: string): never {
  throw new ConfigError(variable, `is set but BROKER_SECURITY_PROTOCOL=${protocol} uses no ${uses}`);
}

function readSasl(raw: ReturnType<typeof readConfig<typeof schema>>): BrokerSecurity['sasl'] {
  const { protocol } = raw;
  if (raw.password !== undefined && raw.passwordFile !== undefined)
    throw new ConfigError('BROKER_SASL_PASSWORD_FILE', 'is set together with BROKER_SASL_PASSWORD; set one');
  const mechanism = need('BROKER_SASL_MECHANISM', raw.mechanism, protocol) as SaslMechanism;
  const username = need('BROKER_SASL_USERNAME', raw.username, protocol);
  let password = raw.password;
  if (raw.passwordFile !== undefined) {
    // A Secret written with `echo` or an editor ends with a line break that is no part of it.
    password = readNamedFile('BROKER_SASL_PASSWORD_FILE', raw.passwordFile).replace(/\r?\n$/, '');
    if (password === '') throw new ConfigError('BROKER_SASL_PASSWORD_FILE', `${raw.passwordFile} is empty`);
  }
  if (password === undefined)
    throw new ConfigError(
      'BROKER_SASL_PASSWORD',
      `is required with BROKER_SECURITY_PROTOCOL=${protocol} (or BROKER_SASL_PASSWORD_FILE)`,
    );
  return { mechanism, username, password };
}

function readTls(raw: ReturnType<typeof readConfig<typeof schema>>): BrokerSecurity['tls'] {
  if (raw.keyFile !== undefined && raw.certFile === undefined)
    throw new ConfigError(
      'BROKER_SSL_CERT_FILE',
      'is required with BROKER_SSL_KEY_FILE (a client certificate)',
    );
  if (raw.certFile !== undefined && raw.keyFile === undefined)
    throw new ConfigError('BROKER_SSL_KEY_FILE', 'is required with BROKER_SSL_CERT_FILE (its private key)');
  const tls: NonNullable<BrokerSecurity['tls']> = {};
  if (raw.caFile !== undefined) tls.ca = readPem('BROKER_SSL_CA_FILE', raw.caFile, 'certificate');
  if (raw.certFile !== undefined && raw.keyFile !== undefined) {
    const cert = readPem('BROKER_SSL_CERT_FILE', raw.certFile, 'certificate');
    const key = readPem('BROKER_SSL_KEY_FILE', raw.keyFile, 'private key');
    if (!new X509Certificate(cert).checkPrivateKey(createPrivateKey(key)))
      throw new ConfigError(
        'BROKER_SSL_KEY_FILE',
        `is not the key of the certificate in BROKER_SSL_CERT_FILE`,
      );
    Object.assign(tls, { cert, key });
  }
  return Object.keys(tls).length > 0 ? tls : undefined;
}

/**
 * Reads and checks the security variables and the files they name; throws a one-line
 * `ConfigError` naming the variable at fault.
 *
 * @example
 * ```ts
 * readBrokerSecurity({ BROKER_SECURITY_PROTOCOL: 'SASL_SSL', BROKER_SASL_MECHANISM: 'SCRAM-SHA-512',
 *   BROKER_SASL_USERNAME: 'ingest', BROKER_SASL_PASSWORD_FILE: '/var/run/secrets/kafka/password' });
 * // { protocol: 'SASL_SSL', sasl: { mechanism: 'SCRAM-SHA-512', username: 'ingest', password: '...' } }
 * ```
 */
export function readBrokerSecurity(env: Env): BrokerSecurity {
  const raw = readConfig(env, schema);
  const { protocol } = raw;
  if (!usesSasl(protocol)) {
    if (raw.mechanism !== undefined) refuse('BROKER_SASL_MECHANISM', protocol, 'SASL');
    if (raw.username !== undefined) refuse('BROKER_SASL_USERNAME', protocol, 'SASL');
    if (raw.password !== undefined) refuse('BROKER_SASL_PASSWORD', protocol, 'SASL');
    if (raw.passwordFile !== undefined) refuse('BROKER_SASL_PASSWORD_FILE', protocol, 'SASL');
  }
  if (!usesTls(protocol)) {
    if (raw.caFile !== undefined) refuse('BROKER_SSL_CA_FILE', protocol, 'TLS');
    if (raw.certFile !== undefined) refuse('BROKER_SSL_CERT_FILE', protocol, 'TLS');
    if (raw.keyFile !== undefined) refuse('BROKER_SSL_KEY_FILE', protocol, 'TLS');
  }
  const sasl = usesSasl(protocol) ? readSasl(raw) : undefined;
  const tls = usesTls(protocol) ? readTls(raw) : undefined;
  return unprintable({ protocol, ...(sasl && { sasl }), ...(tls && { tls }) });
}

/** `security` without its secrets: the protocol, the mechanism and user, which files were given. */
export function describeSecurity(security: BrokerSecurity): Record<string, string | boolean> {
  const { protocol, sasl, tls } = security;
  return {
    protocol,
    ...(sasl && { mechanism: sasl.mechanism, username: sasl.username }),
    ...(tls && { ca: tls.ca !== undefined, clientCertificate: tls.cert !== undefined }),
  };
}

/**
 * Makes `security` print as `describeSecurity` says, in JSON (the logger) and `util.inspect`
 * (console, test failures), so a configuration logged whole or an error carrying it shows no
 * password or private key. The properties themselves stay as they are.
 */
function unprintable(security: BrokerSecurity): BrokerSecurity {
  const described = () => describeSecurity(security);
  Object.defineProperty(security, 'toJSON', { value: described, enumerable: false });
  Object.defineProperty(security, Symbol.for('nodejs.util.inspect.custom'), {
    value: described,
    enumerable: false,
  });
  return security;
}
