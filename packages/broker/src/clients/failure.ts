/**
 * Why a connection to the broker failed, in one line an operator can act on. kafkajs reports a
 * wrong password or an untrusted certificate clearly enough, but a security mismatch often only as
 * "Closed connection" or an OpenSSL alert code; for those the reason names what is likely wrong
 * and the `BROKER_*` variable to look at. It never holds a secret: kafkajs' messages carry none.
 */
import { type BrokerSecurity, usesSasl, usesTls } from '../config/security.js';

interface Hint {
  test: RegExp;
  applies?: (security: BrokerSecurity) => boolean;
  explain: (message: string, security: BrokerSecurity) => string;
}

const HINTS: Hint[] = [
  {
    test: /authentication failed|invalid username or password|invalid credentials/i,
    explain: (m) => `${m} (BROKER_SASL_USERNAME, BROKER_SASL_PASSWORD)`,
  },
  {
    test: /unable to verify|self[- ]signed certificate|unable to get (local )?issuer|certificate has expired|does not match certificate's altnames|altname/i,
    explain: (m) => `the broker's certificate is not trusted: ${m} (BROKER_SSL_CA_FILE)`,
  },
  {
    test: /alert (bad certificate|certificate required|unknown ca|certificate unknown|handshake failure)/i,
    explain: (m) =>
      `the broker refused the TLS handshake (${/alert ([a-z ]+)/i.exec(m)?.[0] ?? m}): a client certificate it trusts is required (BROKER_SSL_CERT_FILE, BROKER_SSL_KEY_FILE)`,
  },
  {
    test: /before secure TLS connection was established|wrong version number|packet length too long/i,
    applies: (s) => usesTls(s.protocol),
    explain: (m, s) =>
      `no TLS handshake with the broker: ${m} (BROKER_SECURITY_PROTOCOL=${s.protocol} on a listener without TLS?)`,
  },
  {
    test: /^Closed connection$/,
    applies: (s) => !usesTls(s.protocol) || !usesSasl(s.protocol),
    explain: (m, s) =>
      `${m}: the broker is stopping, or its listener requires ${usesTls(s.protocol) ? 'SASL' : 'TLS or SASL'} (BROKER_SECURITY_PROTOCOL=${s.protocol})`,
  },
  {
    test: /SASL state|SaslHandshake|UNSUPPORTED_SASL_MECHANISM|unsupported SASL mechanism/i,
    explain: (m) =>
      `${m} (BROKER_SECURITY_PROTOCOL, BROKER_SASL_MECHANISM: does the listener take this SASL mechanism?)`,
  },
];

/**
 * The reason `err` gives for not reaching the broker, with a hint for the security settings'
 * usual mistakes.
 *
 * @example
 * ```ts
 * brokerFailureReason(new Error('Closed connection'), { protocol: 'PLAINTEXT' });
 * // 'Closed connection: the broker is stopping, or its listener requires TLS or SASL (BROKER_SECURITY_PROTOCOL=PLAINTEXT)'
 * ```
 */
export function brokerFailureReason(err: unknown, security: BrokerSecurity): string {
  const message = (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').trim() || 'error';
  const hint = HINTS.find((h) => h.test.test(message) && (h.applies?.(security) ?? true));
  return hint ? hint.explain(message, security) : message;
}
