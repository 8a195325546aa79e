import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readAuthConfig, readSearchConfig } from './config.js';

const SECRET = 'config-test-secret-0123456789abcdef';

describe('search configuration', () => {
  it("has the spec's listener and allowed hosts by default", () => {
    const cfg = readSearchConfig({ APPLICATION_SECRET: SECRET });
    expect(cfg).toMatchObject({
      host: '0.0.0.0',
      port: 9000,
      metricsPort: 9464,
      allowedHosts: ['localhost', '127.0.0.1', '.local'],
      pageTimeoutMs: 5_000,
    });
  });

  it('reads the page deadline from SEARCH_PAGE_TIMEOUT, between 100 ms and 1 min', () => {
    expect(readSearchConfig({ APPLICATION_SECRET: SECRET, SEARCH_PAGE_TIMEOUT: '2s' }).pageTimeoutMs).toBe(
      2_000,
    );
    expect(() => readSearchConfig({ APPLICATION_SECRET: SECRET, SEARCH_PAGE_TIMEOUT: '10m' })).toThrow(
      /SEARCH_PAGE_TIMEOUT/,
    );
  });

  it('fails start-up on an empty ALLOWED_HOSTS, naming the variable', () => {
    expect(() => readSearchConfig({ APPLICATION_SECRET: SECRET, ALLOWED_HOSTS: '' })).toThrow(
      /^ALLOWED_HOSTS: /,
    );
    expect(() => readSearchConfig({ APPLICATION_SECRET: SECRET, ALLOWED_HOSTS: ' , ' })).toThrow(
      /^ALLOWED_HOSTS: /,
    );
  });

  it('requires APPLICATION_SECRET outside development and never echoes it', () => {
    expect(() => readSearchConfig({})).toThrow(/^APPLICATION_SECRET: required outside development/);
    expect(() => readSearchConfig({ APPLICATION_SECRET: 'short-secret' })).toThrow(/^APPLICATION_SECRET: /);
    expect(() => readSearchConfig({ APPLICATION_SECRET: 'short-secret' })).not.toThrow(/short-secret/);
  });

  it('makes a random secret in development', () => {
    const a = readSearchConfig({ NODE_ENV: 'development' });
    const b = readSearchConfig({ NODE_ENV: 'development' });
    expect(a.secret).toHaveLength(64);
    expect(a.secret).not.toBe(b.secret);
  });

  it('reads the listener from PLAY_HTTP_PORT and PLAY_HTTP_ADDRESS', () => {
    const cfg = readSearchConfig({
      APPLICATION_SECRET: SECRET,
      PLAY_HTTP_PORT: '9100',
      PLAY_HTTP_ADDRESS: '127.0.0.1',
    });
    expect(cfg).toMatchObject({ host: '127.0.0.1', port: 9100 });
  });
});

describe('login configuration', () => {
  const SESSION_SECRET = 'session-secret-0123456789abcdef0123';
  const file = (text: string) => {
    const path = join(mkdtempSync(join(tmpdir(), 'search-config-')), 'secret');
    writeFileSync(path, text);
    return path;
  };

  it('refuses to start without SEARCH_AUTH_MODE, naming the four modes', () => {
    expect(() => readAuthConfig({})).toThrow(
      /^SEARCH_AUTH_MODE: required; expected one of oidc, proxy, local, off/,
    );
    expect(() => readAuthConfig({ SEARCH_AUTH_MODE: 'none' })).toThrow(/^SEARCH_AUTH_MODE: /);
    expect(readAuthConfig({ SEARCH_AUTH_MODE: 'off' })).toEqual({ mode: 'off' });
  });

  it('reads the local mode: session secret, 8 h sessions by default, the password from its file', () => {
    const auth = readAuthConfig({
      SEARCH_AUTH_MODE: 'local',
      SEARCH_SESSION_SECRET: SESSION_SECRET,
      SEARCH_LOCAL_ADMIN_PASSWORD_FILE: file('s3cret\n'),
    });
    expect(auth).toEqual({
      mode: 'local',
      session: { secret: SESSION_SECRET, maxAgeMs: 8 * 3_600_000 },
      adminPassword: 's3cret',
    });
    expect(() =>
      readAuthConfig({ SEARCH_AUTH_MODE: 'local', SEARCH_SESSION_SECRET: SESSION_SECRET }),
    ).toThrow(/^SEARCH_LOCAL_ADMIN_PASSWORD_FILE: required/);
  });

  it('requires a session secret of 32 bytes or more outside development', () => {
    const env = { SEARCH_AUTH_MODE: 'local', SEARCH_LOCAL_ADMIN_PASSWORD_FILE: file('pw') };
    expect(() => readAuthConfig(env)).toThrow(/^SEARCH_SESSION_SECRET: required in local mode/);
    expect(() => readAuthConfig({ ...env, SEARCH_SESSION_SECRET: 'short' })).toThrow(
      /^SEARCH_SESSION_SECRET: /,
    );
    expect(() => readAuthConfig({ ...env, SEARCH_SESSION_SECRET: 'short' })).not.toThrow(/short/);
    expect(readAuthConfig({ ...env, NODE_ENV: 'development' })).toMatchObject({ mode: 'local' });
  });

  it('reads the oidc mode with the groups claim and scopes defaulted, and the session lifetime', () => {
    const auth = readAuthConfig({
      SEARCH_AUTH_MODE: 'oidc',
      SEARCH_SESSION_SECRET: SESSION_SECRET,
      SEARCH_SESSION_MAX_AGE: '1h',
      SEARCH_OIDC_ISSUER: 'https://idp.example',
      SEARCH_OIDC_CLIENT_ID: 'search',
      SEARCH_OIDC_CLIENT_SECRET_FILE: file('client-secret'),
    });
    expect(auth).toEqual({
      mode: 'oidc',
      session: { secret: SESSION_SECRET, maxAgeMs: 3_600_000 },
      issuer: 'https://idp.example',
      clientId: 'search',
      clientSecret: 'client-secret',
      groupsClaim: 'groups',
      scopes: 'openid profile email groups',
    });
  });

  it('reads SEARCH_PUBLIC_URL without its trailing slash', () => {
    const cfg = readSearchConfig({
      APPLICATION_SECRET: SECRET,
      SEARCH_PUBLIC_URL: 'https://search.example/',
    });
    expect(cfg.publicUrl).toBe('https://search.example');
    expect(() => readSearchConfig({ APPLICATION_SECRET: SECRET, SEARCH_PUBLIC_URL: 'ftp://x' })).toThrow(
      /^SEARCH_PUBLIC_URL: /,
    );
  });
});
