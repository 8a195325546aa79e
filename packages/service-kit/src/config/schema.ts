import { DURATION_HINT, formatDuration, tryParseDuration } from './duration.js';

/** Environment as `process.env` has it. */
export type Env = Readonly<Record<string, string | undefined>>;

/**
 * A configuration value that cannot be used. The message is one line naming the variable and what
 * was wrong, e.g. `HTTP_PORT: expected an integer from 0 to 65535, got "80a"`.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    readonly variable: string,
    readonly problem: string,
  ) {
    super(`${variable}: ${problem}`.replace(/\s*[\r\n]+\s*/g, ' '));
  }
}

/** Thrown by a field parser; `readConfig` turns it into a `ConfigError` naming the variable. */
class Problem extends Error {}

type Parser<T> = (raw: string) => T;

type Presence<T> = { kind: 'required' } | { kind: 'optional' } | { kind: 'default'; value: T };

/** One environment variable, how to parse it and what happens when it is unset or empty. */
export class Field<T> {
  /** @internal */
  constructor(
    readonly variable: string,
    private readonly parser: Parser<T>,
    private readonly presence: Presence<T> = { kind: 'required' },
    private readonly hidden = false,
  ) {}

  /** The variable may be unset (or empty); the value is then `undefined`. */
  optional(): Field<T | undefined> {
    return new Field<T | undefined>(this.variable, this.parser, { kind: 'optional' }, this.hidden);
  }

  /**
   * Value used when the variable is unset or empty. A string is parsed like the variable itself
   * (`duration('X').default('250ms')`), so a bad default fails where it is written.
   */
  default(value: T | string): Field<Exclude<T, undefined>> {
    const parsed = typeof value === 'string' ? this.parseOrThrow(value, 'default ') : value;
    return new Field<Exclude<T, undefined>>(
      this.variable,
      this.parser as Parser<Exclude<T, undefined>>,
      { kind: 'default', value: parsed as Exclude<T, undefined> },
      this.hidden,
    );
  }

  /** Never echo the value in an error message (secrets, keys). */
  secret(): Field<T> {
    return new Field<T>(this.variable, this.parser, this.presence, true);
  }

  /** Reads and parses the variable from `env`; throws `ConfigError`. */
  read(env: Env): T {
    const raw = env[this.variable];
    if (raw === undefined || raw.trim() === '') {
      if (this.presence.kind === 'default') return this.presence.value;
      if (this.presence.kind === 'optional') return undefined as T;
      throw new ConfigError(this.variable, 'is required but not set');
    }
    return this.parseOrThrow(raw, '');
  }

  private parseOrThrow(raw: string, prefix: string): T {
    try {
      return this.parser(raw.trim());
    } catch (err) {
      if (!(err instanceof Problem)) throw err;
      const got = this.hidden ? '' : `, got ${quote(raw)}`;
      throw new ConfigError(this.variable, `${prefix}${err.message}${got}`);
    }
  }
}

function quote(raw: string): string {
  const shown = raw.length > 60 ? `${raw.slice(0, 57)}...` : raw;
  return JSON.stringify(shown);
}

/** A schema: property names to fields. */
export type Schema = Record<string, Field<unknown>>;

/** The typed result of reading a schema. */
export type ConfigOf<S extends Schema> = { [K in keyof S]: S[K] extends Field<infer T> ? T : never };

/**
 * Reads every field of `schema` from `env`, in order; the first bad value throws a `ConfigError`.
 * Unset and empty variables are the same thing (Helm and Kubernetes render absent values as "").
 *
 * @example
 * ```ts
 * const cfg = readConfig(process.env, {
 *   port: int('HTTP_PORT', { min: 0, max: 65535 }).default(8080),
 *   host: str('HTTP_HOST').default('0.0.0.0'),
 *   closeTimeoutMs: duration('BROKER_CLOSE_TIMEOUT').default('10s'),
 *   issuer: str('AUTH_ISSUER').optional(),
 * });
 * cfg.closeTimeoutMs; // 10000
 * ```
 */
export function readConfig<S extends Schema>(env: Env, schema: S): ConfigOf<S> {
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(schema)) out[key] = field.read(env);
  return out as ConfigOf<S>;
}

/** A string; `pattern` restricts it. */
export function str(variable: string, opts: { pattern?: RegExp; hint?: string } = {}): Field<string> {
  return new Field(variable, (raw) => {
    if (opts.pattern && !opts.pattern.test(raw))
      throw new Problem(`expected ${opts.hint ?? `${opts.pattern}`}`);
    return raw;
  });
}

/** A whole number, optionally bounded (inclusive). */
export function int(variable: string, opts: { min?: number; max?: number } = {}): Field<number> {
  return new Field(variable, (raw) => {
    const n = /^[+-]?\d+$/.test(raw) ? Number(raw) : Number.NaN;
    if (!Number.isSafeInteger(n) || outOfRange(n, opts))
      throw new Problem(`expected an integer${range(opts)}`);
    return n;
  });
}

/** A decimal number, optionally bounded (inclusive), e.g. a sampling ratio. */
export function num(variable: string, opts: { min?: number; max?: number } = {}): Field<number> {
  return new Field(variable, (raw) => {
    const n = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(raw) ? Number(raw) : Number.NaN;
    if (!Number.isFinite(n) || outOfRange(n, opts)) throw new Problem(`expected a number${range(opts)}`);
    return n;
  });
}

/** `true` or `false`, in any letter case. Nothing else, so a typo never flips a switch. */
export function bool(variable: string): Field<boolean> {
  return new Field(variable, (raw) => {
    const lower = raw.toLowerCase();
    if (lower === 'true') return true;
    if (lower === 'false') return false;
    throw new Problem('expected true or false');
  });
}

/** A duration (`250ms`, `10s`, `5m`, `24h`, `90d`) in milliseconds, optionally bounded (in ms). */
export function duration(variable: string, opts: { min?: number; max?: number } = {}): Field<number> {
  return new Field(variable, (raw) => {
    const ms = tryParseDuration(raw);
    if (ms === undefined) throw new Problem(`expected ${DURATION_HINT}`);
    if (outOfRange(ms, opts)) throw new Problem(`expected a duration${range(opts, formatDuration)}`);
    return ms;
  });
}

/** An absolute URL; `protocols` (with the colon, e.g. `['http:', 'https:']`) restricts the scheme. */
export function url(variable: string, opts: { protocols?: readonly string[] } = {}): Field<string> {
  return new Field(variable, (raw) => {
    let parsed: URL;
    try {
      parsed = new URL(raw);
    } catch {
      throw new Problem('expected an absolute URL');
    }
    if (opts.protocols && !opts.protocols.includes(parsed.protocol)) {
      throw new Problem(
        `expected a URL with scheme ${opts.protocols.map((p) => p.replace(/:$/, '')).join(' or ')}`,
      );
    }
    return raw;
  });
}

/**
 * One of a closed set of words. Matching ignores letter case unless `caseSensitive`; the value
 * returned is spelled as in `values`.
 */
export function oneOf<const V extends string>(
  variable: string,
  values: readonly V[],
  opts: { caseSensitive?: boolean } = {},
): Field<V> {
  return new Field(variable, (raw) => {
    const found = values.find((v) =>
      opts.caseSensitive ? v === raw : v.toLowerCase() === raw.toLowerCase(),
    );
    if (found === undefined) throw new Problem(`expected one of ${values.join(', ')}`);
    return found;
  });
}

/** A comma-separated list; blank items are dropped; at least `min` (default 1) items. */
export function list(variable: string, opts: { min?: number } = {}): Field<string[]> {
  const min = opts.min ?? 1;
  return new Field(variable, (raw) => {
    const items = raw
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    if (items.length < min) throw new Problem(`expected a comma-separated list of at least ${min} item(s)`);
    return items;
  });
}

/** A field with its own parser; throw `configProblem(...)` from it to report a bad value. */
export function custom<T>(variable: string, parse: (raw: string) => T): Field<T> {
  return new Field(variable, parse);
}

/** The error a `custom` parser throws to say what was wrong (the variable is added for it). */
export function configProblem(what: string): Error {
  return new Problem(what);
}

function outOfRange(n: number, opts: { min?: number; max?: number }): boolean {
  return (opts.min !== undefined && n < opts.min) || (opts.max !== undefined && n > opts.max);
}

function range(opts: { min?: number; max?: number }, fmt: (n: number) => string = String): string {
  if (opts.min !== undefined && opts.max !== undefined) return ` from ${fmt(opts.min)} to ${fmt(opts.max)}`;
  if (opts.min !== undefined) return ` of at least ${fmt(opts.min)}`;
  if (opts.max !== undefined) return ` of at most ${fmt(opts.max)}`;
  return '';
}
