import { describe, expect, it } from 'vitest';
import { DatabaseConfigError, databaseUrlFromEnv, redactDatabaseUrl } from './config.js';

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

  it('redacts the password for logs', () => {
    expect(redactDatabaseUrl('postgres://a:secret@h:1/d')).toBe('postgres://a:***@h:1/d');
  });
});
