import { describe, expect, it } from 'vitest';
import {
  bool,
  ConfigError,
  configProblem,
  custom,
  duration,
  fatal,
  formatDuration,
  int,
  list,
  num,
  oneOf,
  parseDuration,
  readConfig,
  readListenerTimeouts,
  runMain,
  str,
  url,
} from './index.js';

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('durations', () => {
  it('parses the spec spellings into milliseconds', () => {
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('10s')).toBe(10_000);
    expect(parseDuration('5m')).toBe(300_000);
    expect(parseDuration('24h')).toBe(86_400_000);
    expect(parseDuration('90d')).toBe(7_776_000_000);
    expect(parseDuration('1.5s')).toBe(1500);
    expect(parseDuration('0')).toBe(0);
  });

  it("accepts the units spelled out as the spec's Limits tables write them", () => {
    expect(parseDuration('250 millis')).toBe(250);
    expect(parseDuration('30 seconds')).toBe(30_000);
    expect(parseDuration('1 second')).toBe(1000);
    expect(parseDuration('5 minutes')).toBe(300_000);
    expect(parseDuration('24 hours')).toBe(86_400_000);
    expect(parseDuration('90 days')).toBe(7_776_000_000);
    expect(parseDuration('10 s')).toBe(10_000);
  });

  it('refuses bare numbers, unknown units, negatives and garbage', () => {
    for (const bad of ['10', '10  s', '-5s', '5w', 's', '', '1e3ms', 'PT10S', '5 weeks', '5 constructor']) {
      expect(() => parseDuration(bad), bad).toThrow(RangeError);
    }
  });

  it('writes milliseconds back in the largest exact unit', () => {
    expect([250, 10_000, 300_000, 86_400_000, 1500].map(formatDuration)).toEqual([
      '250ms',
      '10s',
      '5m',
      '1d',
      '1500ms',
    ]);
  });
});

describe('readConfig', () => {
  const schema = {
    port: int('HTTP_PORT', { min: 0, max: 65535 }).default(8080),
    host: str('HTTP_HOST').default('0.0.0.0'),
    window: duration('CONSUMER_BATCH_WINDOW').default('250ms'),
    enabled: bool('MAINTENANCE_ENABLED').default(true),
    retain: int('MAINTENANCE_RETAIN_MONTHS', { min: 1 }).optional(),
    ratio: num('OTEL_TRACES_SAMPLER_ARG', { min: 0, max: 1 }).default(0.1),
    db: url('DATABASE_URL', { protocols: ['postgres:', 'postgresql:'] }).default(
      'postgres://localhost:5432/observatory',
    ),
    mode: oneOf('MODE', ['binary', 'structured']).default('binary'),
    hosts: list('ALLOWED_HOSTS').default('localhost,127.0.0.1,.local'),
  };

  it('applies defaults for unset and empty variables', () => {
    expect(readConfig({ HTTP_HOST: '' }, schema)).toEqual({
      port: 8080,
      host: '0.0.0.0',
      window: 250,
      enabled: true,
      retain: undefined,
      ratio: 0.1,
      db: 'postgres://localhost:5432/observatory',
      mode: 'binary',
      hosts: ['localhost', '127.0.0.1', '.local'],
    });
  });

  it('parses every kind of field', () => {
    const cfg = readConfig(
      {
        HTTP_PORT: '0',
        CONSUMER_BATCH_WINDOW: '2s',
        MAINTENANCE_ENABLED: 'FALSE',
        MAINTENANCE_RETAIN_MONTHS: '12',
        OTEL_TRACES_SAMPLER_ARG: '1',
        MODE: 'Structured',
        ALLOWED_HOSTS: ' a , b ,',
      },
      schema,
    );
    expect(cfg).toMatchObject({
      port: 0,
      window: 2000,
      enabled: false,
      retain: 12,
      ratio: 1,
      mode: 'structured',
    });
    expect(cfg.hosts).toEqual(['a', 'b']);
  });

  const failures: Array<[Record<string, string>, string]> = [
    [{ HTTP_PORT: '80a' }, 'HTTP_PORT: expected an integer from 0 to 65535, got "80a"'],
    [{ HTTP_PORT: '70000' }, 'HTTP_PORT: expected an integer from 0 to 65535, got "70000"'],
    [
      { CONSUMER_BATCH_WINDOW: '250' },
      'CONSUMER_BATCH_WINDOW: expected a duration such as 250ms, 10s, 5m, 24h or 90d, got "250"',
    ],
    [{ MAINTENANCE_ENABLED: 'yes' }, 'MAINTENANCE_ENABLED: expected true or false, got "yes"'],
    [
      { MAINTENANCE_RETAIN_MONTHS: '0' },
      'MAINTENANCE_RETAIN_MONTHS: expected an integer of at least 1, got "0"',
    ],
    [{ OTEL_TRACES_SAMPLER_ARG: '1.5' }, 'OTEL_TRACES_SAMPLER_ARG: expected a number from 0 to 1, got "1.5"'],
    [
      { DATABASE_URL: 'jdbc:postgresql://x/y' },
      'DATABASE_URL: expected a URL with scheme postgres or postgresql, got "jdbc:postgresql://x/y"',
    ],
    [{ DATABASE_URL: 'not a url' }, 'DATABASE_URL: expected an absolute URL, got "not a url"'],
    [{ MODE: 'batch' }, 'MODE: expected one of binary, structured, got "batch"'],
    [
      { ALLOWED_HOSTS: ' , ' },
      'ALLOWED_HOSTS: expected a comma-separated list of at least 1 item(s), got " , "',
    ],
  ];
  for (const [env, message] of failures) {
    it(`stops with one line naming the variable: ${message}`, () => {
      const err = configError(() => readConfig(env, schema));
      expect(err.message).toBe(message);
      expect(err.variable).toBe(Object.keys(env)[0]);
      expect(err.message).not.toContain('\n');
    });
  }

  it('names a required variable that is missing', () => {
    expect(configError(() => readConfig({}, { b: str('BROKER_BOOTSTRAP_SERVERS') })).message).toBe(
      'BROKER_BOOTSTRAP_SERVERS: is required but not set',
    );
  });

  it('keeps a secret value out of the message and a multi-line value on one line', () => {
    const secretErr = configError(() => readConfig({ S: 'hunter2' }, { s: int('S').secret() }));
    expect(secretErr.message).toBe('S: expected an integer');
    const multi = configError(() => readConfig({ P: 'a\nb' }, { p: int('P') }));
    expect(multi.message).toBe('P: expected an integer, got "a\\nb"');
  });

  it('refuses a bad default where it is written', () => {
    expect(() => duration('X').default('ten seconds')).toThrow('X: default expected a duration');
  });

  it('supports custom parsers reporting through configProblem', () => {
    const even = custom('N', (raw) => {
      const n = Number(raw);
      if (n % 2 !== 0) throw configProblem('expected an even number');
      return n;
    });
    expect(readConfig({ N: '4' }, { n: even })).toEqual({ n: 4 });
    expect(configError(() => readConfig({ N: '3' }, { n: even })).message).toBe(
      'N: expected an even number, got "3"',
    );
  });
});

describe('fatal and runMain', () => {
  function fakeProcess() {
    const written: string[] = [];
    const codes: number[] = [];
    return {
      written,
      codes,
      proc: { stderr: { write: (t: string) => written.push(t) }, exit: (c: number) => void codes.push(c) },
    };
  }

  it('prints one line and exits 1 on a ConfigError from main', async () => {
    const { written, codes, proc } = fakeProcess();
    await runMain(() => {
      readConfig({ HTTP_PORT: 'x' }, { p: int('HTTP_PORT') });
    }, proc);
    expect(written).toEqual(['configuration error: HTTP_PORT: expected an integer, got "x"\n']);
    expect(codes).toEqual([1]);
  });

  it('prints other start-up failures on one line too', async () => {
    const { written, codes, proc } = fakeProcess();
    await runMain(async () => {
      throw new Error('listen EADDRINUSE: address already in use\n    at somewhere');
    }, proc);
    expect(written).toEqual(['Error: listen EADDRINUSE: address already in use at somewhere\n']);
    expect(codes).toEqual([1]);
  });

  it('does not exit when main succeeds', async () => {
    const { written, codes, proc } = fakeProcess();
    await runMain(async () => {}, proc);
    expect(written).toEqual([]);
    expect(codes).toEqual([]);
    expect(() => fatal(new ConfigError('X', 'bad'), proc)).toThrow('X: bad');
    expect(written).toEqual(['configuration error: X: bad\n']);
  });
});

describe('readListenerTimeouts', () => {
  it('defaults to 30s request, 10s headers, 5s keep-alive and reads the three variables', () => {
    expect(readListenerTimeouts({})).toEqual({
      requestTimeoutMs: 30_000,
      headersTimeoutMs: 10_000,
      keepAliveTimeoutMs: 5_000,
    });
    expect(
      readListenerTimeouts({
        HTTP_REQUEST_TIMEOUT: '1m',
        HTTP_HEADERS_TIMEOUT: '2s',
        HTTP_KEEP_ALIVE_TIMEOUT: '500ms',
      }),
    ).toEqual({ requestTimeoutMs: 60_000, headersTimeoutMs: 2_000, keepAliveTimeoutMs: 500 });
  });

  it('stops with one line naming the variable on a bad or inconsistent value', () => {
    expect(configError(() => readListenerTimeouts({ HTTP_REQUEST_TIMEOUT: '30' })).variable).toBe(
      'HTTP_REQUEST_TIMEOUT',
    );
    expect(configError(() => readListenerTimeouts({ HTTP_KEEP_ALIVE_TIMEOUT: '0' })).variable).toBe(
      'HTTP_KEEP_ALIVE_TIMEOUT',
    );
    expect(
      configError(() => readListenerTimeouts({ HTTP_REQUEST_TIMEOUT: '5s', HTTP_HEADERS_TIMEOUT: '10s' }))
        .message,
    ).toBe('HTTP_HEADERS_TIMEOUT: 10000ms exceeds HTTP_REQUEST_TIMEOUT (5000ms); it must not');
  });
});
