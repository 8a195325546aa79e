import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { createCertificateAuthority, issueCertificate, tempDataDir } from '@event-observatory/devstack';
import { afterAll, describe, expect, it } from 'vitest';
import { kafkajsSecurity } from '../clients/kafka.js';
import { readAdminBrokerConfig } from './admin.js';
import { readConsumerBrokerConfig } from './consumer.js';
import { readProducerConfig } from './producer.js';
import { readBrokerSecurity } from './security.js';

const dir = tempDataDir('broker-security');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const ca = createCertificateAuthority(join(dir, 'tls'), 'security-test-ca');
const client = issueCertificate(ca, { name: 'client', commonName: 'ingest', usage: 'client' });
const other = issueCertificate(ca, { name: 'other', commonName: 'other', usage: 'client' });
const passwordFile = join(dir, 'password');
writeFileSync(passwordFile, 's3cret-from-file\n');
const emptyFile = join(dir, 'empty');
writeFileSync(emptyFile, '');

const SASL = {
  BROKER_SECURITY_PROTOCOL: 'SASL_SSL',
  BROKER_SASL_MECHANISM: 'SCRAM-SHA-512',
  BROKER_SASL_USERNAME: 'ingest',
  BROKER_SASL_PASSWORD: 's3cret',
};

describe('readBrokerSecurity', () => {
  it('is PLAINTEXT when nothing is set, as Kafka', () => {
    expect(readBrokerSecurity({})).toEqual({ protocol: 'PLAINTEXT' });
  });

  it('reads SASL_SSL with a password or a password file (its final line break dropped), and the CA', () => {
    expect(readBrokerSecurity({ ...SASL, BROKER_SSL_CA_FILE: ca.certFile })).toEqual({
      protocol: 'SASL_SSL',
      sasl: { mechanism: 'SCRAM-SHA-512', username: 'ingest', password: 's3cret' },
      tls: { ca: readFileSync(ca.certFile, 'utf8') },
    });
    const fromFile = readBrokerSecurity({
      ...SASL,
      BROKER_SASL_PASSWORD: undefined,
      BROKER_SASL_PASSWORD_FILE: passwordFile,
    });
    expect(fromFile.sasl?.password).toBe('s3cret-from-file');
    expect(fromFile.tls).toBeUndefined(); // the system's CAs
  });

  it('reads SSL with a client certificate and its key, and SASL_PLAINTEXT with PLAIN', () => {
    expect(
      readBrokerSecurity({
        BROKER_SECURITY_PROTOCOL: 'SSL',
        BROKER_SSL_CERT_FILE: client.certFile,
        BROKER_SSL_KEY_FILE: client.keyFile,
      }),
    ).toEqual({
      protocol: 'SSL',
      tls: { cert: readFileSync(client.certFile, 'utf8'), key: readFileSync(client.keyFile, 'utf8') },
    });
    expect(
      readBrokerSecurity({
        ...SASL,
        BROKER_SECURITY_PROTOCOL: 'SASL_PLAINTEXT',
        BROKER_SASL_MECHANISM: 'PLAIN',
      }),
    ).toMatchObject({ protocol: 'SASL_PLAINTEXT', sasl: { mechanism: 'PLAIN' } });
  });

  it.each([
    [{ BROKER_SECURITY_PROTOCOL: 'TLS' }, /^BROKER_SECURITY_PROTOCOL: expected one of PLAINTEXT, SSL/],
    [{ ...SASL, BROKER_SASL_MECHANISM: 'GSSAPI' }, /^BROKER_SASL_MECHANISM: expected one of PLAIN,/],
    [
      { ...SASL, BROKER_SASL_MECHANISM: undefined },
      /^BROKER_SASL_MECHANISM: is required with BROKER_SECURITY_PROTOCOL=SASL_SSL$/,
    ],
    [{ ...SASL, BROKER_SASL_USERNAME: '' }, /^BROKER_SASL_USERNAME: is required with/],
    [{ ...SASL, BROKER_SASL_PASSWORD: undefined }, /^BROKER_SASL_PASSWORD: is required with .*PASSWORD_FILE/],
    [
      { ...SASL, BROKER_SASL_PASSWORD_FILE: passwordFile },
      /^BROKER_SASL_PASSWORD_FILE: is set together with/,
    ],
    [
      { ...SASL, BROKER_SASL_PASSWORD: undefined, BROKER_SASL_PASSWORD_FILE: emptyFile },
      /^BROKER_SASL_PASSWORD_FILE: .* is empty$/,
    ],
    [
      { BROKER_SASL_MECHANISM: 'PLAIN' },
      /^BROKER_SASL_MECHANISM: is set but BROKER_SECURITY_PROTOCOL=PLAINTEXT uses no SASL$/,
    ],
    [{ BROKER_SECURITY_PROTOCOL: 'SSL', BROKER_SASL_PASSWORD: 'x' }, /^BROKER_SASL_PASSWORD: is set but/],
    [
      { ...SASL, BROKER_SECURITY_PROTOCOL: 'SASL_PLAINTEXT', BROKER_SSL_CA_FILE: ca.certFile },
      /^BROKER_SSL_CA_FILE: is set but BROKER_SECURITY_PROTOCOL=SASL_PLAINTEXT uses no TLS$/,
    ],
    [
      { BROKER_SECURITY_PROTOCOL: 'SSL', BROKER_SSL_KEY_FILE: client.keyFile },
      /^BROKER_SSL_CERT_FILE: is required with BROKER_SSL_KEY_FILE/,
    ],
    [
      { BROKER_SECURITY_PROTOCOL: 'SSL', BROKER_SSL_CERT_FILE: client.certFile },
      /^BROKER_SSL_KEY_FILE: is required with BROKER_SSL_CERT_FILE/,
    ],
    [
      { BROKER_SECURITY_PROTOCOL: 'SSL', BROKER_SSL_CA_FILE: join(dir, 'missing.pem') },
      /^BROKER_SSL_CA_FILE: cannot read ".*missing.pem" \(ENOENT\)$/,
    ],
    [
      { ...SASL, BROKER_SASL_PASSWORD: undefined, BROKER_SASL_PASSWORD_FILE: dir },
      /^BROKER_SASL_PASSWORD_FILE: cannot read ".*" \(EISDIR\)$/,
    ],
    [
      { BROKER_SECURITY_PROTOCOL: 'SSL', BROKER_SSL_CA_FILE: client.keyFile },
      /^BROKER_SSL_CA_FILE: ".*" holds no PEM certificate/,
    ],
    [
      {
        BROKER_SECURITY_PROTOCOL: 'SSL',
        BROKER_SSL_CERT_FILE: client.certFile,
        BROKER_SSL_KEY_FILE: other.keyFile,
      },
      /^BROKER_SSL_KEY_FILE: is not the key of the certificate in BROKER_SSL_CERT_FILE$/,
    ],
  ])('refuses %o with one line naming the variable', (env, message) => {
    expect(() => readBrokerSecurity(env)).toThrow(message);
  });

  it('never puts a password in an error message', () => {
    const errors = [
      { BROKER_SASL_PASSWORD: 'hunter2' },
      { ...SASL, BROKER_SASL_PASSWORD: 'hunter2', BROKER_SASL_PASSWORD_FILE: passwordFile },
    ].map((env) => {
      try {
        readBrokerSecurity(env);
      } catch (err) {
        return (err as Error).message;
      }
      return 'no error';
    });
    expect(errors.join('\n')).not.toMatch(/hunter2|no error/);
  });

  it('prints without the password and the private key, in JSON and util.inspect', () => {
    const security = readBrokerSecurity({
      ...SASL,
      BROKER_SSL_CA_FILE: ca.certFile,
      BROKER_SSL_CERT_FILE: client.certFile,
      BROKER_SSL_KEY_FILE: client.keyFile,
    });
    for (const printed of [
      JSON.stringify({ config: { security } }),
      inspect({ config: { security } }, { depth: 9 }),
    ]) {
      expect(printed).toContain('ingest');
      expect(printed).not.toMatch(/s3cret|PRIVATE KEY/);
    }
    expect(security.sasl?.password).toBe('s3cret');
  });
});

describe('every config reader', () => {
  it('carries the same security settings', () => {
    const env = { ...SASL, BROKER_SSL_CA_FILE: ca.certFile };
    const expected = readBrokerSecurity(env);
    expect(readProducerConfig(env).security).toEqual(expected);
    expect(readConsumerBrokerConfig(env).security).toEqual(expected);
    expect(readAdminBrokerConfig(env, 'c').security).toEqual(expected);
    expect(() => readConsumerBrokerConfig({ BROKER_SECURITY_PROTOCOL: 'SASL_SSL' })).toThrow(
      /^BROKER_SASL_MECHANISM/,
    );
  });
});

describe("kafkajs' ssl and sasl", () => {
  it('are TLS (system CAs or the PEM contents) and the mechanism in its kafkajs spelling', () => {
    expect(kafkajsSecurity({ protocol: 'PLAINTEXT' })).toEqual({});
    expect(kafkajsSecurity({ protocol: 'SSL' })).toEqual({ ssl: true });
    expect(
      kafkajsSecurity({
        protocol: 'SASL_SSL',
        sasl: { mechanism: 'SCRAM-SHA-256', username: 'u', password: 'p' },
        tls: { ca: 'CA' },
      }),
    ).toEqual({ ssl: { ca: 'CA' }, sasl: { mechanism: 'scram-sha-256', username: 'u', password: 'p' } });
    expect(
      kafkajsSecurity({
        protocol: 'SASL_PLAINTEXT',
        sasl: { mechanism: 'PLAIN', username: 'u', password: 'p' },
      }),
    ).toEqual({ sasl: { mechanism: 'plain', username: 'u', password: 'p' } });
  });
});
