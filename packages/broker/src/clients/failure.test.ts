import { describe, expect, it } from 'vitest';
import type { BrokerSecurity } from '../config/security.js';
import { brokerFailureReason } from './failure.js';

const SASL_SSL: BrokerSecurity = {
  protocol: 'SASL_SSL',
  sasl: { mechanism: 'SCRAM-SHA-512', username: 'u', password: 'p' },
};

// The messages are kafkajs 2.2.4's, as seen against the devstack's secured listeners.
describe('brokerFailureReason', () => {
  it('names the variables to check for each security mistake', () => {
    const cases: [string, BrokerSecurity, RegExp][] = [
      [
        'SASL SCRAM SHA512 authentication failed: Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512',
        SASL_SSL,
        /invalid credentials .*\(BROKER_SASL_USERNAME, BROKER_SASL_PASSWORD\)$/,
      ],
      [
        'Connection error: unable to verify the first certificate',
        SASL_SSL,
        /^the broker's certificate is not trusted: .*\(BROKER_SSL_CA_FILE\)$/,
      ],
      [
        'Connection error: 80AC0DBC7F7F0000:error:0A000412:SSL routines:ssl3_read_bytes:sslv3 alert bad certificate:../deps/openssl/openssl/ssl/record/rec_layer_s3.c:1601:SSL alert number 42\n',
        { protocol: 'SSL' },
        /^the broker refused the TLS handshake \(alert bad certificate\): .*\(BROKER_SSL_CERT_FILE, BROKER_SSL_KEY_FILE\)$/,
      ],
      [
        'Connection error: Client network socket disconnected before secure TLS connection was established',
        { protocol: 'SSL' },
        /^no TLS handshake with the broker: .*\(BROKER_SECURITY_PROTOCOL=SSL on a listener without TLS\?\)$/,
      ],
      [
        'Closed connection',
        { protocol: 'PLAINTEXT' },
        /^Closed connection: the broker is stopping, or its listener requires TLS or SASL \(BROKER_SECURITY_PROTOCOL=PLAINTEXT\)$/,
      ],
      [
        'Closed connection',
        { protocol: 'SSL' },
        /its listener requires SASL \(BROKER_SECURITY_PROTOCOL=SSL\)$/,
      ],
    ];
    for (const [message, security, reason] of cases)
      expect(brokerFailureReason(new Error(message), security)).toMatch(reason);
  });

  it('passes any other failure on as it is, on one line', () => {
    expect(
      brokerFailureReason(new Error('Connection error: connect ECONNREFUSED 127.0.0.1:1'), SASL_SSL),
    ).toBe('Connection error: connect ECONNREFUSED 127.0.0.1:1');
    expect(brokerFailureReason(new Error('Closed connection'), SASL_SSL)).toBe('Closed connection');
    expect(brokerFailureReason('a\n b', SASL_SSL)).toBe('a b');
  });
});
