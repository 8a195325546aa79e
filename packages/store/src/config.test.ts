import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DatabaseConfigError,
  databaseTls,
  databaseUrlFromEnv,
  primaryDatabaseUrlFromEnv,
  redactDatabaseUrl,
} from './config.js';

describe('databaseUrlFromEnv', () => {
  it('defaults to the spec URL with user observatory', () => {
    expect(databaseUrlFromEnv({})).toBe('postgres://observatory@localhost:5432/observatory');
  });

  it('accepts the jdbc form and applies DATABASE_USER and DATABASE_PASSWORD', () => {
    const url = databaseUrlFromEnv({
      DATABASE_URL: 'jdbc:postgresql://db:5433/ev',
      DATABASE_USER: 'writer',
      DATABASE_PASSWORD: 'p@ss',
    });
    expect(url).toBe('postgres://writer:p%40ss@db:5433/ev');
  });

  it('keeps the credentials of a postgres URL when no override is set', () => {
    expect(databaseUrlFromEnv({ DATABASE_URL: 'postgres://a:b@h:1/d' })).toBe('postgres://a:b@h:1/d');
  });

  it('names DATABASE_URL when the value is not a database URL', () => {
    expect(() => databaseUrlFromEnv({ DATABASE_URL: 'http://x' })).toThrow(DatabaseConfigError);
    expect(() => databaseUrlFromEnv({ DATABASE_URL: 'nope' })).toThrow(/^DATABASE_URL/);
  });

  it('reads DATABASE_PRIMARY_URL with the same credentials, and nothing when it is unset or empty', () => {
    const env = {
      DATABASE_URL: 'postgres://replica:5432/ev',
      DATABASE_USER: 'reader',
      DATABASE_PASSWORD: 's',
    };
    expect(
      primaryDatabaseUrlFromEnv({ ...env, DATABASE_PRIMARY_URL: 'jdbc:postgresql://primary:5432/ev' }),
    ).toBe('postgres://reader:s@primary:5432/ev');
    expect(primaryDatabaseUrlFromEnv(env)).toBeUndefined();
    expect(primaryDatabaseUrlFromEnv({ ...env, DATABASE_PRIMARY_URL: ' ' })).toBeUndefined();
    expect(() => primaryDatabaseUrlFromEnv({ DATABASE_PRIMARY_URL: 'nope' })).toThrow(
      /^DATABASE_PRIMARY_URL/,
    );
  });

  it('redacts the password for logs', () => {
    expect(redactDatabaseUrl('postgres://a:secret@h:1/d')).toBe('postgres://a:***@h:1/d');
  });
});

describe('databaseTls', () => {
  const dir = mkdtempSync(join(tmpdir(), 'store-tls-'));
  const ca = join(dir, 'ca.pem');
  writeFileSync(ca, '-----BEGIN CERTIFICATE-----\n');
  const url = (query: string) => `postgres://u:hunter2@db:5432/d?${query}`;

  it('reads no TLS when sslmode is absent, and sslmode=disable likewise', () => {
    expect(databaseTls(url('')).mode).toBe('disable');
    expect(databaseTls(url('sslmode=disable'))).toEqual({
      mode: 'disable',
      verifyChain: false,
      verifyHost: false,
    });
  });

  it('encrypts without checks under require, but verifies the chain once sslrootcert names a file (libpq)', () => {
    expect(databaseTls(url('sslmode=require'))).toMatchObject({ verifyChain: false, verifyHost: false });
    expect(databaseTls(url(`sslmode=require&sslrootcert=${ca}`))).toMatchObject({
      verifyChain: true,
      verifyHost: false,
      ca: '-----BEGIN CERTIFICATE-----\n',
    });
  });

  it('checks the host name only under verify-full', () => {
    expect(databaseTls(url(`sslmode=verify-ca&sslrootcert=${ca}`))).toMatchObject({ verifyHost: false });
    expect(databaseTls(url('sslmode=verify-full&sslrootcert=system'))).toEqual({
      mode: 'verify-full',
      verifyChain: true,
      verifyHost: true,
    });
  });

  it('refuses, naming DATABASE_URL and never the password, an unknown sslmode or a bad combination', () => {
    for (const query of [
      'sslmode=verify',
      'sslmode=verify-full',
      'sslmode=verify-ca&sslrootcert=system',
      `sslmode=require&sslrootcert=${join(dir, 'missing.pem')}`,
      `sslmode=require&sslcert=${ca}`,
      'ssl=true',
      'sslmode=require&uselibpqcompat=true',
      'sslmode=require&sslcrl=/x',
    ]) {
      const attempt = () => databaseTls(url(query));
      expect(attempt, query).toThrow(DatabaseConfigError);
      expect(attempt, query).toThrow(/^DATABASE_URL: /);
      expect(attempt, query).not.toThrow(/hunter2/);
    }
    expect(() => databaseTls(url(`sslrootcert=${join(dir, 'missing.pem')}&sslmode=verify-ca`))).toThrow(
      /sslrootcert .*missing\.pem cannot be read \(ENOENT\)/,
    );
  });

  it('is checked by databaseUrlFromEnv, so a bad setting stops the service at start-up', () => {
    expect(() => databaseUrlFromEnv({ DATABASE_URL: 'jdbc:postgresql://db/d?sslmode=maybe' })).toThrow(
      /^DATABASE_URL: sslmode must be one of disable, allow, prefer, require, verify-ca, verify-full/,
    );
  });
});
