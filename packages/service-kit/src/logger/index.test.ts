import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ConfigError, readConfig } from '../config/index.js';
import { createLogger, logLevel, redactUrlCredentials, toPinoLevel } from './index.js';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, destination };
}

describe('logger', () => {
  it('writes JSON lines with level word, ISO time, service and version', () => {
    const { lines, destination } = capture();
    createLogger({ service: 'ingest', version: '1.0.0', destination }).info({ port: 8080 }, 'listening');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 'info',
      service: 'ingest',
      version: '1.0.0',
      port: 8080,
      msg: 'listening',
    });
    expect(String(lines[0]!.time)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(lines[0]).not.toHaveProperty('trace_id'); // no active span
  });

  it('takes LOG_LEVEL in any letter case', () => {
    const { lines, destination } = capture();
    const logger = createLogger({ service: 's', level: 'WARN', destination });
    logger.info('hidden');
    logger.warn('shown');
    expect(lines.map((l) => l.msg)).toEqual(['shown']);
    expect(['INFO', 'Debug', 'warning', 'OFF', 'trace'].map((l) => toPinoLevel(l))).toEqual([
      'info',
      'debug',
      'warn',
      'silent',
      'trace',
    ]);
  });

  it('refuses an unknown LOG_LEVEL with one line naming the variable', () => {
    expect(() => createLogger({ service: 's', level: 'LOUD' })).toThrow(ConfigError);
    expect(() => readConfig({ LOG_LEVEL: 'verbose' }, { level: logLevel() })).toThrow(
      /^LOG_LEVEL: expected one of TRACE, DEBUG, INFO, WARN, WARNING, ERROR, FATAL, OFF, SILENT, got "verbose"$/,
    );
    expect(readConfig({}, { level: logLevel() })).toEqual({ level: 'info' });
  });

  it('never writes authorization headers, tokens, passwords or secrets', () => {
    const { lines, destination } = capture();
    createLogger({ service: 's', destination, redact: ['connectionString'] }).info(
      {
        authorization: 'Bearer top',
        req: {
          headers: { authorization: 'Bearer eyJ.secret.sig', 'content-type': 'text/plain', cookie: 'c=1' },
        },
        password: 'p1',
        db: { password: 'p2' },
        auth: { token: 't1', secret: 's1' },
        connectionString: 'postgres://u:p@h/db',
        AUTH_SECRET: 'shh',
        keep: 'visible',
      },
      'request',
    );
    const text = JSON.stringify(lines[0]);
    for (const secret of [
      'Bearer top',
      'eyJ.secret.sig',
      'c=1',
      'p1',
      'p2',
      't1',
      's1',
      'shh',
      'postgres://u:p@h/db',
    ]) {
      expect(text).not.toContain(secret);
    }
    expect(lines[0]).toMatchObject({
      keep: 'visible',
      req: { headers: { authorization: '[REDACTED]', 'content-type': 'text/plain' } },
    });
  });

  it('masks the password of a URL', () => {
    expect(redactUrlCredentials('postgres://observatory:s3cret@127.0.0.1:5432/db')).toBe(
      'postgres://observatory:[REDACTED]@127.0.0.1:5432/db',
    );
    expect(redactUrlCredentials('http://host:8080/path')).toBe('http://host:8080/path');
  });
});
