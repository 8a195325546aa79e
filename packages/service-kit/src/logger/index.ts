/**
 * JSON logs (pino) with the active span's `trace_id`/`span_id`, `LOG_LEVEL`, and redaction of
 * credentials.
 * @module
 */
import { context, isSpanContextValid, trace } from '@opentelemetry/api';
import { type DestinationStream, type LevelWithSilent, type Logger as PinoLogger, pino } from 'pino';
import { ConfigError, configProblem, custom, type Field } from '../config/index.js';

/**
 * The one logger type of the workspace: what every module logs through. A pino logger from
 * `createLogger` fits, and so does a test's recorder. `level` (pino's) tells a client library
 * such as kafkajs how much of its own chatter to forward.
 */
export interface Logger {
  readonly level?: string;
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const LEVEL_ALIASES: Record<string, LevelWithSilent> = {
  trace: 'trace',
  debug: 'debug',
  info: 'info',
  warn: 'warn',
  warning: 'warn',
  error: 'error',
  fatal: 'fatal',
  off: 'silent',
  silent: 'silent',
};

/** Accepted `LOG_LEVEL` words, any letter case. */
export const LOG_LEVEL_NAMES = Object.keys(LEVEL_ALIASES);

/** `INFO`, `debug`, `Warning`, `OFF`, ... to pino's level; `undefined` when unknown. */
export function toPinoLevel(raw: string): LevelWithSilent | undefined {
  return LEVEL_ALIASES[raw.trim().toLowerCase()];
}

/**
 * A config field for a log level (default variable `LOG_LEVEL`, default value `info`).
 *
 * @example
 * ```ts
 * const { level } = readConfig(process.env, { level: logLevel() });
 * ```
 */
export function logLevel(variable = 'LOG_LEVEL'): Field<LevelWithSilent> {
  return custom(variable, (raw) => {
    const level = toPinoLevel(raw);
    if (!level)
      throw configProblem(`expected one of ${LOG_LEVEL_NAMES.map((l) => l.toUpperCase()).join(', ')}`);
    return level;
  }).default('info');
}

/** Field names whose values never reach a log line, at any of the first three depths. */
export const REDACTED_KEYS = [
  'authorization',
  'Authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'password',
  'passwd',
  'secret',
  'token',
  'accessToken',
  'access_token',
  'refreshToken',
  'refresh_token',
  'idToken',
  'id_token',
  'apiKey',
  'api_key',
  'privateKey',
  'private_key',
  'clientSecret',
  'client_secret',
  'AUTH_SECRET',
  'DEV_TOKEN',
  'APPLICATION_SECRET',
  'STORE_PASSWORD',
  'DATABASE_PASSWORD',
  'DASHBOARD_ADMIN_PASSWORD',
] as const;

/** What a redacted value reads as. */
export const REDACTED = '[REDACTED]';

function redactPaths(keys: readonly string[]): string[] {
  const seg = (k: string) => (/^[A-Za-z_$][\w$]*$/.test(k) ? k : `["${k}"]`);
  const join = (prefix: string, k: string) =>
    seg(k).startsWith('[') ? `${prefix}${seg(k)}` : `${prefix}.${k}`;
  return keys.flatMap((k) => [seg(k), join('*', k), join('*.*', k)]);
}

/** Text with any `user:password@` of a URL replaced, e.g. before logging `DATABASE_URL`. */
export function redactUrlCredentials(text: string): string {
  return text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^/\s:@]*):[^@\s/]*@/gi, `$1:${REDACTED}@`);
}

/** The ids of the active span, for log lines and error reports; empty without a valid span. */
export function traceFields(): { trace_id?: string; span_id?: string } {
  const span = trace.getSpan(context.active());
  if (!span) return {};
  const sc = span.spanContext();
  if (!isSpanContextValid(sc)) return {};
  return { trace_id: sc.traceId, span_id: sc.spanId };
}

export interface LoggerOptions {
  /** Written as `service` on every line. */
  service: string;
  /** Written as `version` on every line when given. */
  version?: string;
  /** `LOG_LEVEL` text (`INFO`, `debug`, ...) or a pino level; default `info`. */
  level?: string;
  /** More field names to redact (same depths as `REDACTED_KEYS`). */
  redact?: readonly string[];
  /** Where lines go; default stdout. Tests pass a stream. */
  destination?: DestinationStream;
}

/**
 * A pino JSON logger: one line per record with `level` as a word, ISO `time`, `service`,
 * `trace_id` and `span_id` of the active OpenTelemetry span (when one is active), and
 * credentials (authorization headers, tokens, passwords, secrets) replaced by `[REDACTED]`.
 *
 * @example
 * ```ts
 * const logger = createLogger({ service: 'ingest', level: process.env.LOG_LEVEL });
 * logger.info({ port }, 'listening');
 * // {"level":"info","time":"...","service":"ingest","trace_id":"...","span_id":"...","port":8080,"msg":"listening"}
 * ```
 */
export function createLogger(opts: LoggerOptions): PinoLogger {
  const level = toPinoLevel(opts.level ?? 'info');
  if (!level) {
    throw new ConfigError(
      'LOG_LEVEL',
      `expected one of ${LOG_LEVEL_NAMES.map((l) => l.toUpperCase()).join(', ')}`,
    );
  }
  const options = {
    level,
    base: { service: opts.service, ...(opts.version ? { version: opts.version } : {}) },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
    mixin: traceFields,
    redact: { paths: redactPaths([...REDACTED_KEYS, ...(opts.redact ?? [])]), censor: REDACTED },
  };
  return opts.destination ? pino(options, opts.destination) : pino(options);
}
