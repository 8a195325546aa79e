import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { basicAuth, DEFAULTS, ForgeConfig, PUBLIC_BASE_URI, Secret, tokenAuth } from './config.js';

const ok = (input: Parameters<typeof ForgeConfig.create>[0]) => {
  const r = ForgeConfig.create(input);
  if (!r.ok) throw new Error(`${r.error.field}: ${r.error.message}`);
  return r.value;
};
const err = (input: Parameters<typeof ForgeConfig.create>[0]) => {
  const r = ForgeConfig.create(input);
  if (r.ok) throw new Error('expected a validation error');
  return r.error;
};

describe('base URI', () => {
  it('normalises the API root without a trailing slash', () => {
    expect(ok({ userAgent: 'ua', baseUri: 'https://git.example.org/api/v1/' }).baseUri).toBe(
      'https://git.example.org/api/v1',
    );
    expect(ok({ userAgent: 'ua', baseUri: 'http://127.0.0.1:3000/gitea/api/v1///' }).baseUri).toBe(
      'http://127.0.0.1:3000/gitea/api/v1',
    );
  });

  it('defaults to the public hosted instance', () => {
    expect(ok({ userAgent: 'ua' }).baseUri).toBe(PUBLIC_BASE_URI);
  });

  it.each([
    ['', 'must not be empty'],
    ['git.example.org/api/v1', 'is not an absolute url'],
    ['ftp://git.example.org/api/v1', 'must use http or https'],
    ['https://user:pw@git.example.org/api/v1', 'must not embed credentials'],
    ['https://git.example.org/api/v1?token=x', 'must not have a query or fragment'],
    ['https://git.example.org/', 'must end with /api/v1'],
  ])('refuses %j', (baseUri, message) => {
    expect(err({ userAgent: 'ua', baseUri })).toEqual({ field: 'baseUri', message });
  });
});

describe('user agent', () => {
  it('is required', () => {
    expect(err({ userAgent: '' })).toEqual({ field: 'userAgent', message: 'must not be empty' });
  });

  it.each(['bot/1.0\r\nX-Injected: 1', 'bot\u0000', 'bot\u007f', 'tab\there'])(
    'refuses control characters in %j',
    (ua) => {
      expect(err({ userAgent: ua })).toEqual({
        field: 'userAgent',
        message: 'must not contain control characters',
      });
    },
  );
});

describe('defaults and limits', () => {
  it('applies the documented defaults', () => {
    const c = ok({ userAgent: 'ua' });
    expect(c.defaultPageSize).toBe(DEFAULTS.defaultPageSize);
    expect(c.connectTimeoutMs).toBe(10_000);
    expect(c.readTimeoutMs).toBe(30_000);
    expect(c.maxResponseBodyBytes).toBe(8 * 1024 * 1024);
    expect(c.maxDownloadBodyBytes).toBe(128 * 1024 * 1024);
    expect(c.retry).toMatchObject({
      maxAttempts: 3,
      initialDelayMs: 250,
      maxDelayMs: 5000,
      multiplier: 2,
      jitter: true,
    });
    expect(c.auth).toEqual({ kind: 'anonymous' });
  });

  it('accepts zero and negative timeouts (every call then fails in transport)', () => {
    const c = ok({ userAgent: 'ua', connectTimeoutMs: 0, readTimeoutMs: -5 });
    expect([c.connectTimeoutMs, c.readTimeoutMs]).toEqual([0, -5]);
  });

  it.each([
    [{ defaultPageSize: 0 }, 'pageSize'],
    [{ defaultPageSize: 1.5 }, 'pageSize'],
    [{ maxResponseBodyBytes: 0 }, 'maxResponseBodyBytes'],
    [{ maxDownloadBodyBytes: -1 }, 'maxDownloadBodyBytes'],
    [{ connectTimeoutMs: Number.NaN }, 'connectTimeout'],
    [{ retry: { maxAttempts: 0 } }, 'retryMaxAttempts'],
    [{ retry: { multiplier: 0.5 } }, 'retryDelay'],
  ])('refuses %j', (extra, field) => {
    expect(err({ userAgent: 'ua', ...extra }).field).toBe(field);
  });
});

describe('credentials', () => {
  const TOKEN = 'e1b2c3d4e5f60718293a4b5c6d7e8f9012345678';

  it('refuses an empty token, password or malformed one-time password without echoing them', () => {
    expect(err({ userAgent: 'ua', auth: tokenAuth('') })).toEqual({
      field: 'apiToken',
      message: 'must not be empty',
    });
    expect(err({ userAgent: 'ua', auth: tokenAuth('abc\ndef') }).field).toBe('apiToken');
    expect(err({ userAgent: 'ua', auth: basicAuth('me', '') })).toEqual({
      field: 'password',
      message: 'must not be empty',
    });
    const otp = err({ userAgent: 'ua', auth: basicAuth('me', 'pw', { otp: 'x12345' }) });
    expect(otp).toEqual({ field: 'otp', message: 'must be 6 to 8 digits' });
    expect(JSON.stringify(otp)).not.toContain('x12345');
    expect(err({ userAgent: 'ua', auth: basicAuth('me:you', 'pw') }).field).toBe('username');
    expect(err({ userAgent: 'ua', auth: tokenAuth(TOKEN, { sudo: 'bad name!' }) }).field).toBe('sudo');
  });

  it('redacts secrets in toString, JSON and inspect output', () => {
    const s = new Secret(TOKEN);
    expect(String(s)).toBe('[redacted]');
    expect(JSON.stringify({ s })).toBe('{"s":"[redacted]"}');
    expect(inspect(s)).toBe('Secret([redacted])');
    expect(`${s}`).not.toContain(TOKEN);
    expect(s.reveal()).toBe(TOKEN);
  });

  it('keeps the whole configuration safe to log, for every auth variant', () => {
    const variants = [
      tokenAuth(TOKEN, { sudo: 'alice' }),
      basicAuth('bob', 'hunter2-password', { otp: '123456', sudo: 'alice' }),
    ];
    for (const auth of variants) {
      const c = ok({ userAgent: 'ua', auth });
      for (const text of [
        String(c),
        JSON.stringify(c),
        inspect(c, { depth: 10 }),
        inspect(c.auth, { depth: 10 }),
      ]) {
        expect(text).not.toContain(TOKEN);
        expect(text).not.toContain('hunter2-password');
        expect(text).not.toContain('123456');
      }
      expect(String(c)).toContain('[redacted]');
      expect(String(c)).not.toContain('alice'); // the sudo login is redacted too
      expect(c.toJSON().auth).toMatchObject({ sudo: '[redacted]' });
    }
  });
});
