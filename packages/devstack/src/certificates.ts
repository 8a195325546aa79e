/**
 * Certificates for a test run, made with the `openssl` command: a certificate authority of the
 * run's own, and server or client certificates it signs. The secured Kafka listeners and the TLS
 * PostgreSQL use them; tests hand the CA file to clients as `BROKER_SSL_CA_FILE` or `sslrootcert`.
 *
 * Keys are ECDSA P-256 (fast to generate) in unencrypted PKCS#8, the form Kafka's PEM stores and
 * PostgreSQL's `ssl_key_file` both read; every key file is mode 0600.
 *
 * @example
 * ```ts
 * const ca = createCertificateAuthority(join(dir, 'tls'), 'observatory-test-ca');
 * const server = issueCertificate(ca, { name: 'kafka', commonName: 'localhost', ipAddresses: ['127.0.0.1'] });
 * ```
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface CertificateAuthority {
  /** Folder holding the authority's files and every certificate it issues. */
  dir: string;
  /** PEM certificate of the authority: what clients trust. */
  certFile: string;
  /** Its private key (PKCS#8 PEM, mode 0600). */
  keyFile: string;
}

export interface IssuedCertificate {
  /** PEM certificate, signed by the authority. */
  certFile: string;
  /** Unencrypted PKCS#8 PEM private key, mode 0600. */
  keyFile: string;
  /** The key followed by the certificate in one file (Kafka's `ssl.keystore.type=PEM`), mode 0600. */
  keyAndCertFile: string;
}

export interface CertificateRequest {
  /** File name stem in the authority's folder, e.g. `kafka` or `client-producer`. */
  name: string;
  commonName: string;
  /** `subjectAltName` DNS entries (servers: every name clients dial). */
  dnsNames?: string[];
  /** `subjectAltName` IP entries. */
  ipAddresses?: string[];
  /** `client` for a client certificate (mutual TLS), `server` (default) for a listener. */
  usage?: 'server' | 'client';
  /** Validity in days; default 30 (a test run's certificates are made per run). */
  days?: number;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

function newKey(file: string, cwd: string): void {
  openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', file], cwd);
  chmodSync(join(cwd, file), 0o600);
}

/** A new self-signed authority in `dir` (emptied first), valid for 30 days. */
export function createCertificateAuthority(dir: string, commonName: string): CertificateAuthority {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  newKey('ca.key', dir);
  openssl(
    [
      'req',
      '-x509',
      '-new',
      '-key',
      'ca.key',
      '-days',
      '30',
      '-subj',
      `/CN=${commonName}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
      '-out',
      'ca.crt',
    ],
    dir,
  );
  return { dir, certFile: join(dir, 'ca.crt'), keyFile: join(dir, 'ca.key') };
}

/** A certificate for `request`, signed by `ca`, written to `<ca.dir>/<name>.{crt,key,pem}`. */
export function issueCertificate(ca: CertificateAuthority, request: CertificateRequest): IssuedCertificate {
  const { dir } = ca;
  const { name } = request;
  newKey(`${name}.key`, dir);
  openssl(
    ['req', '-new', '-key', `${name}.key`, '-subj', `/CN=${request.commonName}`, '-out', `${name}.csr`],
    dir,
  );
  const altNames = [
    ...(request.dnsNames ?? []).map((n) => `DNS:${n}`),
    ...(request.ipAddresses ?? []).map((ip) => `IP:${ip}`),
  ];
  const usage = request.usage ?? 'server';
  const extensions = [
    'basicConstraints=CA:FALSE',
    'keyUsage=critical,digitalSignature,keyEncipherment',
    `extendedKeyUsage=${usage === 'server' ? 'serverAuth' : 'clientAuth'}`,
    ...(altNames.length > 0 ? [`subjectAltName=${altNames.join(',')}`] : []),
  ];
  writeFileSync(join(dir, `${name}.ext`), `${extensions.join('\n')}\n`);
  openssl(
    [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      String(request.days ?? 30),
      '-extfile',
      `${name}.ext`,
      '-out',
      `${name}.crt`,
    ],
    dir,
  );
  const keyAndCertFile = join(dir, `${name}.pem`);
  writeFileSync(
    keyAndCertFile,
    readFileSync(join(dir, `${name}.key`), 'utf8') + readFileSync(join(dir, `${name}.crt`), 'utf8'),
    { mode: 0o600 },
  );
  return { certFile: join(dir, `${name}.crt`), keyFile: join(dir, `${name}.key`), keyAndCertFile };
}
