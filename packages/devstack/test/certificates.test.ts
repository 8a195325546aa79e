import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, statSync } from 'node:fs';
import { connect, createServer } from 'node:tls';
import { afterAll, describe, expect, it } from 'vitest';
import { createCertificateAuthority, issueCertificate } from '../src/certificates.js';
import { tempDataDir } from '../src/paths.js';

const dir = tempDataDir('certs');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('certificates', () => {
  const ca = createCertificateAuthority(`${dir}/tls`, 'devstack-test-ca');
  const server = issueCertificate(ca, {
    name: 'server',
    commonName: 'localhost',
    dnsNames: ['localhost'],
    ipAddresses: ['127.0.0.1'],
  });
  const client = issueCertificate(ca, { name: 'client', commonName: 'producer', usage: 'client' });

  it('issues PKCS#8 keys of mode 0600 and certificates that verify against the authority', () => {
    expect(readFileSync(server.keyFile, 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(statSync(server.keyFile).mode & 0o777).toBe(0o600);
    expect(statSync(server.keyAndCertFile).mode & 0o777).toBe(0o600);
    const out = execFileSync(
      'openssl',
      ['verify', '-CAfile', ca.certFile, server.certFile, client.certFile],
      { encoding: 'utf8' },
    );
    expect(out).toContain(`${server.certFile}: OK`);
    expect(out).toContain(`${client.certFile}: OK`);
  });

  it('serves TLS that a client trusting only the authority accepts, with mutual authentication', async () => {
    const tls = createServer(
      {
        key: readFileSync(server.keyFile),
        cert: readFileSync(server.certFile),
        ca: readFileSync(ca.certFile),
        requestCert: true,
        rejectUnauthorized: true,
      },
      (socket) => socket.end(`hello ${(socket.getPeerCertificate().subject as { CN: string }).CN}`),
    );
    await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
    const { port } = tls.address() as { port: number };
    try {
      const greeting = await new Promise<string>((resolve, reject) => {
        const socket = connect({
          host: '127.0.0.1',
          port,
          ca: readFileSync(ca.certFile),
          key: readFileSync(client.keyFile),
          cert: readFileSync(client.certFile),
        });
        let data = '';
        socket.on('data', (chunk) => {
          data += chunk;
        });
        socket.on('end', () => resolve(data));
        socket.on('error', reject);
      });
      expect(greeting).toBe('hello producer');
      const refused = await new Promise<Error>((resolve) => {
        const socket = connect({
          host: '127.0.0.1',
          port,
          ca: readFileSync(ca.certFile),
          servername: 'elsewhere.example',
        });
        socket.on('error', resolve);
        socket.on('secureConnect', () => resolve(new Error('connected')));
      });
      expect(refused.message).toMatch(/altnames|does not match|certificate/i);
    } finally {
      tls.close();
    }
  });
});
