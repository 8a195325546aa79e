/**
 * DATABASE_URL's libpq TLS parameters against a PostgreSQL of this file's own that serves TLS
 * with a certificate made for the run (naming `localhost` only) and refuses plaintext logins
 * (pg_hba.conf `hostssl` only), through the store's pools and migration runner.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  createCertificateAuthority,
  createDatabase,
  issueCertificate,
  type PostgresHandle,
  startPostgres,
  tempDataDir,
} from '@event-observatory/devstack';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createReadPool, createWritePool, migrate } from '../src/index.js';

const dir = tempDataDir('store-tls');
let server: PostgresHandle;
let caFile: string;
let untrustedCaFile: string;
let clientCert: { certFile: string; keyFile: string };
let database: string;

beforeAll(async () => {
  const ca = createCertificateAuthority(join(dir, 'ca'), 'observatory-test-ca');
  caFile = ca.certFile;
  untrustedCaFile = createCertificateAuthority(join(dir, 'other-ca'), 'someone-else').certFile;
  const cert = issueCertificate(ca, { name: 'postgres', commonName: 'localhost', dnsNames: ['localhost'] });
  clientCert = issueCertificate(ca, { name: 'client', commonName: 'tls-client', usage: 'client' });
  server = await startPostgres({
    dataDir: join(dir, 'pg'),
    tls: { certFile: cert.certFile, keyFile: cert.keyFile, clientCaFile: ca.certFile, required: true },
  });
  database = await createDatabase(server.url, 'tls_store');
}, 120_000);

afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The run's database at `host`, with exactly the TLS parameters of `query`. */
function at(host: string, query: string): string {
  const u = new URL(database);
  u.hostname = host;
  u.search = query;
  return u.toString();
}

/** What the server says of the session's TLS, asked through the write pool. */
async function session(url: string): Promise<{ ssl: boolean; client_dn: string | null }> {
  const pool = createWritePool({ url, max: 1 });
  try {
    const { rows } = await pool.query(
      'SELECT s.ssl, s.client_dn FROM pg_stat_ssl s WHERE s.pid = pg_backend_pid()',
    );
    return rows[0];
  } finally {
    await pool.end();
  }
}

describe('sslmode against a server that requires TLS', () => {
  it('verify-full connects when sslrootcert trusts the certificate and the host is the one it names', async () => {
    expect(await session(at('localhost', `sslmode=verify-full&sslrootcert=${caFile}`))).toEqual({
      ssl: true,
      client_dn: null,
    });
  });

  it('verify-full refuses a host name the certificate does not name (127.0.0.1 for a localhost certificate)', async () => {
    await expect(session(at('127.0.0.1', `sslmode=verify-full&sslrootcert=${caFile}`))).rejects.toThrow(
      /does not match certificate's altnames.*127\.0\.0\.1/,
    );
  });

  it('verify-ca checks the authority but not the name', async () => {
    expect((await session(at('127.0.0.1', `sslmode=verify-ca&sslrootcert=${caFile}`))).ssl).toBe(true);
    await expect(
      session(at('localhost', `sslmode=verify-ca&sslrootcert=${untrustedCaFile}`)),
    ).rejects.toThrow(/self-signed certificate in certificate chain|unable to verify/);
  });

  it('require encrypts without checking the certificate, as libpq does', async () => {
    expect((await session(at('127.0.0.1', 'sslmode=require'))).ssl).toBe(true);
  });

  it('require with sslrootcert checks the chain (libpq: a root certificate makes require behave as verify-ca)', async () => {
    await expect(session(at('localhost', `sslmode=require&sslrootcert=${untrustedCaFile}`))).rejects.toThrow(
      /self-signed certificate in certificate chain|unable to verify/,
    );
  });

  it('disable is refused by a hostssl-only server, with its reason', async () => {
    await expect(session(at('127.0.0.1', 'sslmode=disable'))).rejects.toMatchObject({
      code: '28000',
      message: expect.stringMatching(/no pg_hba\.conf entry .*no encryption/),
    });
  });

  it('prefer and allow end up on TLS when the server refuses plaintext', async () => {
    expect((await session(at('127.0.0.1', 'sslmode=prefer'))).ssl).toBe(true);
    expect((await session(at('127.0.0.1', 'sslmode=allow'))).ssl).toBe(true);
  });

  it('sends the client certificate of sslcert and sslkey', async () => {
    const query = `sslmode=verify-full&sslrootcert=${caFile}&sslcert=${clientCert.certFile}&sslkey=${clientCert.keyFile}`;
    expect((await session(at('localhost', query))).client_dn).toBe('/CN=tls-client');
  });

  it('migrates and reads through verify-full (the runner and the read pool use the same settings)', async () => {
    const url = at('localhost', `sslmode=verify-full&sslrootcert=${caFile}`);
    expect((await migrate({ url })).applied.length).toBeGreaterThan(0);
    const read = createReadPool({ url });
    try {
      const { rows } = await read.query('SELECT count(*)::int AS n FROM events.cloud_event');
      expect(rows[0].n).toBe(0);
    } finally {
      await read.end();
    }
  });
});

describe('sslmode against a server without TLS (the run stack)', () => {
  it('prefer and allow fall back to plaintext; require fails', async () => {
    const plain = new URL(await createDatabase(inject('stack').databaseUrl, 'tls_plain'));
    const url = (mode: string) => {
      plain.search = `sslmode=${mode}`;
      return plain.toString();
    };
    expect((await session(url('prefer'))).ssl).toBe(false);
    expect((await session(url('allow'))).ssl).toBe(false);
    await expect(session(url('require'))).rejects.toThrow(/does not support SSL/);
  });
});
