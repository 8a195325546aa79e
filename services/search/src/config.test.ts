import { describe, expect, it } from 'vitest';
import { readSearchConfig } from './config.js';

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
