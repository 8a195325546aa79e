/**
 * Client configuration: checked once, when it is built, and safe to log afterwards.
 */

import { inspect } from 'node:util';
import {
  hasControlCharacter,
  invalid,
  type Login,
  parseLogin,
  type Validated,
  type ValidationError,
  valid,
} from './validation.js';

const REDACTED = '[redacted]';

/**
 * A credential (API token, password, one-time password). Its text form, JSON form and
 * `util.inspect` form are all `[redacted]`; only {@link Secret.reveal} gives the value, and the
 * library calls it solely while writing the request header.
 */
export class Secret {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  /** The credential itself. Do not log it. */
  reveal(): string {
    return this.#value;
  }
  toString(): string {
    return REDACTED;
  }
  toJSON(): string {
    return REDACTED;
  }
  [inspect.custom](): string {
    return `Secret(${REDACTED})`;
  }
}

/** How requests are authenticated. */
export type Auth =
  /** No credentials: public data only. */
  | { readonly kind: 'anonymous' }
  /**
   * An API token, sent as `Authorization: token <token>`. `sudo` makes an admin token act as that
   * user (header `Sudo`).
   */
  | { readonly kind: 'token'; readonly token: Secret; readonly sudo?: Login }
  /**
   * User name and password, sent as HTTP basic auth; `otp` is the current TOTP code of an account
   * with two-factor authentication (headers `X-Gitea-OTP` and `X-Forgejo-OTP`).
   */
  | {
      readonly kind: 'basic';
      readonly username: string;
      readonly password: Secret;
      readonly otp?: Secret;
      readonly sudo?: Login;
    };

/** Retry policy for safe methods (GET, HEAD). Unsafe methods, merge included, are never retried. */
export interface RetryPolicy {
  /** Total attempts including the first one; 1 disables retries. */
  readonly maxAttempts: number;
  /** Delay before the first retry, milliseconds. */
  readonly initialDelayMs: number;
  /** Upper bound of one delay, milliseconds. A status whose Retry-After asks for more is not retried. */
  readonly maxDelayMs: number;
  /** Growth factor of the delay per attempt. */
  readonly multiplier: number;
  /** Randomise each delay uniformly in [delay/2, delay] so that clients do not retry in step. */
  readonly jitter: boolean;
  /** HTTP statuses worth another attempt. */
  readonly retryOnStatus: readonly number[];
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  maxAttempts: 3,
  initialDelayMs: 250,
  maxDelayMs: 5_000,
  multiplier: 2,
  jitter: true,
  retryOnStatus: Object.freeze([408, 429, 502, 503, 504]),
});

/** The public hosted Gitea instance, used when no base URI is given. */
export const PUBLIC_BASE_URI = 'https://gitea.com/api/v1';

export const DEFAULTS = Object.freeze({
  baseUri: PUBLIC_BASE_URI,
  defaultPageSize: 50,
  connectTimeoutMs: 10_000,
  readTimeoutMs: 30_000,
  maxResponseBodyBytes: 8 * 1024 * 1024,
  maxDownloadBodyBytes: 128 * 1024 * 1024,
});

/** What a caller writes; everything but `userAgent` has a default. */
export interface ForgeConfigInput {
  /** API root ending in `/api/v1`; a trailing slash is removed. Default {@link PUBLIC_BASE_URI}. */
  baseUri?: string;
  auth?: Auth;
  retry?: Partial<RetryPolicy>;
  /** Sent on every request; required; control characters are refused. */
  userAgent: string;
  /** `limit` sent when the caller gives no paging; the server may cap it silently. Default 50. */
  defaultPageSize?: number;
  /** Time allowed to open the TCP (and TLS) connection. Zero or negative makes every call fail. */
  connectTimeoutMs?: number;
  /** Time allowed without progress once connected (headers or body). Zero or negative makes every call fail. */
  readTimeoutMs?: number;
  /** Bound of a JSON response body, bytes. */
  maxResponseBodyBytes?: number;
  /** Bound of an archive download, bytes; no operation downloads one yet (diff and patch take `maxResponseBodyBytes`). */
  maxDownloadBodyBytes?: number;
}

/** A checked configuration. Build it with {@link ForgeConfig.create}. */
export class ForgeConfig {
  private constructor(
    readonly baseUri: string,
    readonly auth: Auth,
    readonly retry: RetryPolicy,
    readonly userAgent: string,
    readonly defaultPageSize: number,
    readonly connectTimeoutMs: number,
    readonly readTimeoutMs: number,
    readonly maxResponseBodyBytes: number,
    readonly maxDownloadBodyBytes: number,
  ) {
    Object.freeze(this);
  }

  /**
   * Checks and normalises a configuration.
   *
   * @example
   * const cfg = ForgeConfig.create({
   *   baseUri: 'https://gitea.example.org/api/v1/',
   *   userAgent: 'my-tool/1.0',
   *   auth: tokenAuth(process.env.GITEA_TOKEN ?? ''),
   * });
   * if (!cfg.ok) throw new Error(`${cfg.error.field}: ${cfg.error.message}`);
   */
  static create(input: ForgeConfigInput): Validated<ForgeConfig> {
    const base = normaliseBaseUri(input.baseUri ?? DEFAULTS.baseUri);
    if (!base.ok) return base;
    const ua = checkUserAgent(input.userAgent);
    if (ua) return { ok: false, error: ua };
    const auth = input.auth ?? { kind: 'anonymous' };
    const authError = checkAuth(auth);
    if (authError) return { ok: false, error: authError };
    const retry = { ...DEFAULT_RETRY_POLICY, ...input.retry };
    const retryError = checkRetry(retry);
    if (retryError) return { ok: false, error: retryError };
    const pageSize = input.defaultPageSize ?? DEFAULTS.defaultPageSize;
    if (!Number.isSafeInteger(pageSize) || pageSize < 1)
      return invalid('pageSize', 'must be a positive integer');
    const connect = input.connectTimeoutMs ?? DEFAULTS.connectTimeoutMs;
    const read = input.readTimeoutMs ?? DEFAULTS.readTimeoutMs;
    // Zero or negative timeouts are accepted on purpose (spec): every call then fails in transport.
    if (!Number.isFinite(connect))
      return invalid('connectTimeout', 'must be a finite number of milliseconds');
    if (!Number.isFinite(read)) return invalid('readTimeout', 'must be a finite number of milliseconds');
    const maxBody = input.maxResponseBodyBytes ?? DEFAULTS.maxResponseBodyBytes;
    const maxDownload = input.maxDownloadBodyBytes ?? DEFAULTS.maxDownloadBodyBytes;
    if (!Number.isSafeInteger(maxBody) || maxBody < 1) {
      return invalid('maxResponseBodyBytes', 'must be a positive integer');
    }
    if (!Number.isSafeInteger(maxDownload) || maxDownload < 1) {
      return invalid('maxDownloadBodyBytes', 'must be a positive integer');
    }
    return valid(
      new ForgeConfig(
        base.value,
        Object.freeze({ ...auth }),
        Object.freeze({ ...retry, retryOnStatus: Object.freeze([...retry.retryOnStatus]) }),
        input.userAgent,
        pageSize,
        connect,
        read,
        maxBody,
        maxDownload,
      ),
    );
  }

  /**
   * A loggable summary; credentials appear as `[redacted]`, and so does the `sudo` login (whom an
   * admin credential acts as is kept out of logs, like the `sudo` query parameter of recorded URIs).
   */
  toString(): string {
    return `ForgeConfig(${JSON.stringify(this.toJSON())})`;
  }

  toJSON(): Record<string, unknown> {
    return {
      baseUri: this.baseUri,
      auth: describeAuth(this.auth),
      retry: this.retry,
      userAgent: this.userAgent,
      defaultPageSize: this.defaultPageSize,
      connectTimeoutMs: this.connectTimeoutMs,
      readTimeoutMs: this.readTimeoutMs,
      maxResponseBodyBytes: this.maxResponseBodyBytes,
      maxDownloadBodyBytes: this.maxDownloadBodyBytes,
    };
  }

  [inspect.custom](): string {
    return this.toString();
  }
}

function describeAuth(auth: Auth): Record<string, unknown> {
  switch (auth.kind) {
    case 'anonymous':
      return { kind: 'anonymous' };
    case 'token':
      return { kind: 'token', token: REDACTED, ...(auth.sudo ? { sudo: REDACTED } : {}) };
    case 'basic':
      return {
        kind: 'basic',
        username: auth.username,
        password: REDACTED,
        ...(auth.otp ? { otp: REDACTED } : {}),
        ...(auth.sudo ? { sudo: REDACTED } : {}),
      };
  }
}

/** Token auth. @example tokenAuth(process.env.GITEA_TOKEN ?? '') */
export function tokenAuth(token: string, opts: { sudo?: string } = {}): Auth {
  return {
    kind: 'token',
    token: new Secret(token),
    ...(opts.sudo !== undefined ? { sudo: opts.sudo as Login } : {}),
  };
}

/** Basic auth with an optional one-time password. */
export function basicAuth(
  username: string,
  password: string,
  opts: { otp?: string; sudo?: string } = {},
): Auth {
  return {
    kind: 'basic',
    username,
    password: new Secret(password),
    ...(opts.otp !== undefined ? { otp: new Secret(opts.otp) } : {}),
    ...(opts.sudo !== undefined ? { sudo: opts.sudo as Login } : {}),
  };
}

/** Normalises an API root: http(s), no credentials, query or fragment, no trailing slash, ends in /api/v1. */
export function normaliseBaseUri(raw: string): Validated<string> {
  if (typeof raw !== 'string' || raw.trim() === '') return invalid('baseUri', 'must not be empty');
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return invalid('baseUri', 'is not an absolute url');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return invalid('baseUri', 'must use http or https');
  if (url.username || url.password) return invalid('baseUri', 'must not embed credentials');
  if (url.search || url.hash) return invalid('baseUri', 'must not have a query or fragment');
  const path = url.pathname.replace(/\/+$/, '');
  if (!path.endsWith('/api/v1')) return invalid('baseUri', 'must end with /api/v1');
  return valid(`${url.origin}${path}`);
}

function checkUserAgent(ua: string): ValidationError | undefined {
  if (typeof ua !== 'string' || ua.trim() === '') return { field: 'userAgent', message: 'must not be empty' };
  if (hasControlCharacter(ua)) return { field: 'userAgent', message: 'must not contain control characters' };
  if (/[^\u0020-\u007e]/.test(ua)) return { field: 'userAgent', message: 'must be printable ascii' };
  return undefined;
}

function checkAuth(auth: Auth): ValidationError | undefined {
  const headerSafe = (s: string) => !hasControlCharacter(s) && !/[^\u0020-\u007e]/.test(s);
  switch (auth.kind) {
    case 'anonymous':
      return undefined;
    case 'token': {
      const t = auth.token instanceof Secret ? auth.token.reveal() : '';
      if (t.trim() === '') return { field: 'apiToken', message: 'must not be empty' };
      if (!headerSafe(t)) return { field: 'apiToken', message: 'must be printable ascii' };
      return checkSudo(auth.sudo);
    }
    case 'basic': {
      if (typeof auth.username !== 'string' || auth.username === '') {
        return { field: 'username', message: 'must not be empty' };
      }
      if (auth.username.includes(':') || !headerSafe(auth.username)) {
        return { field: 'username', message: 'must be printable ascii without a colon' };
      }
      const p = auth.password instanceof Secret ? auth.password.reveal() : '';
      if (p === '') return { field: 'password', message: 'must not be empty' };
      if (auth.otp !== undefined) {
        const otp = auth.otp instanceof Secret ? auth.otp.reveal() : '';
        if (!/^[0-9]{6,8}$/.test(otp)) return { field: 'otp', message: 'must be 6 to 8 digits' };
      }
      return checkSudo(auth.sudo);
    }
    default:
      return { field: 'auth', message: 'unknown auth kind' };
  }
}

function checkSudo(sudo: string | undefined): ValidationError | undefined {
  if (sudo === undefined) return undefined;
  const r = parseLogin(sudo, 'sudo');
  return r.ok ? undefined : r.error;
}

function checkRetry(r: RetryPolicy): ValidationError | undefined {
  if (!Number.isSafeInteger(r.maxAttempts) || r.maxAttempts < 1) {
    return { field: 'retryMaxAttempts', message: 'must be an integer of at least 1' };
  }
  if (!(r.initialDelayMs >= 0) || !(r.maxDelayMs >= 0) || !(r.multiplier >= 1)) {
    return { field: 'retryDelay', message: 'delays must be non-negative and the multiplier at least 1' };
  }
  if (!Array.isArray(r.retryOnStatus) || r.retryOnStatus.some((s) => !Number.isInteger(s))) {
    return { field: 'retryOnStatus', message: 'must be a list of http statuses' };
  }
  return undefined;
}
