/**
 * The wire: one HTTP exchange with timeouts and a hard byte bound, and the retry layer around it.
 *
 * Built on `node:http`/`node:https` rather than the global `fetch`: Node 20's fetch cannot bound
 * the connect phase separately from the read phase without the `undici` package, and the byte
 * bound must stop reading (and close the socket) the moment it is crossed.
 */

import http from 'node:http';
import https from 'node:https';
import type { Auth, ForgeConfig, RetryPolicy } from './config.js';
import type { CallContext, TransportCause } from './result.js';

/** What an operation asks the wire for. `path` is relative to the base URI and already encoded. */
export interface WireRequest {
  readonly operation: string;
  readonly method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE' | 'HEAD';
  readonly path: string;
  readonly query?: readonly (readonly [string, string])[];
  /** A JSON body, already serialised (see {@link serialiseJson}). */
  readonly body?: string;
  /** Accept header. */
  readonly accept?: string;
  /** Byte bound of the response body. */
  readonly maxBodyBytes: number;
  readonly signal?: AbortSignal;
}

export interface WireResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  /** The body; empty when an error status's body was over the bound (the status still counts). */
  readonly body: Buffer;
}

export type WireOutcome =
  | { readonly ok: true; readonly response: WireResponse; readonly context: CallContext }
  | {
      readonly ok: false;
      readonly cause: TransportCause;
      readonly detail: string;
      readonly context: CallContext;
    };

type AttemptOutcome =
  | { ok: true; response: WireResponse }
  | {
      ok: false;
      cause: TransportCause;
      detail: string;
      /** Status and headers, when the response had begun before the failure. */
      response?: { status: number; headers: http.IncomingHttpHeaders };
    };

/** How long an idle keep-alive socket is kept before the client closes it (see {@link Wire}). */
export const IDLE_SOCKET_TIMEOUT_MS = 4_000;

/**
 * Serialises a JSON request body. `undefined` for a value JSON cannot represent (BigInt, a cycle,
 * a function or symbol at the top), so that the caller can refuse it before sending.
 */
export function serialiseJson(body: unknown): string | undefined {
  try {
    const text = JSON.stringify(body);
    return typeof text === 'string' ? text : undefined;
  } catch {
    return undefined;
  }
}

/** Query parameters that may carry credentials; dropped from every recorded URI. */
const SECRET_PARAMS = new Set(['token', 'access_token', 'sudo', 'password', 'otp', 'client_secret']);

/** The URI as it may be logged: no user info, no credential-bearing query parameters. */
export function redactUri(uri: string): string {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return '[unparseable uri]';
  }
  url.username = '';
  url.password = '';
  const kept = new URLSearchParams();
  for (const [k, v] of url.searchParams) {
    if (!SECRET_PARAMS.has(k.toLowerCase())) kept.append(k, v);
  }
  url.search = kept.toString();
  return url.toString();
}

/** Methods the retry policy may repeat. */
export function isSafeMethod(method: string): boolean {
  return method === 'GET' || method === 'HEAD';
}

/**
 * Delay before retry number `retry` (1-based): exponential backoff, never shorter than the
 * server's Retry-After. The caller does not retry at all when Retry-After exceeds `maxDelayMs`.
 */
export function retryDelayMs(
  policy: RetryPolicy,
  retry: number,
  retryAfterMs?: number,
  random = Math.random,
): number {
  const base = Math.min(policy.maxDelayMs, policy.initialDelayMs * policy.multiplier ** (retry - 1));
  const jittered = policy.jitter ? base / 2 + random() * (base / 2) : base;
  const wanted = retryAfterMs !== undefined ? Math.max(jittered, retryAfterMs) : jittered;
  return Math.round(Math.min(policy.maxDelayMs, wanted));
}

/** Parses Retry-After (seconds or an HTTP date) into milliseconds from now. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * Whether an outcome of a safe request deserves another attempt under the policy. A status whose
 * Retry-After exceeds `maxDelayMs` is not retried: the server's answer is returned instead of
 * asking again before it allows (Octokit's rule).
 */
export function shouldRetry(
  policy: RetryPolicy,
  method: string,
  outcome: AttemptOutcome,
  retryAfterMs?: number,
): boolean {
  if (!isSafeMethod(method)) return false;
  if (outcome.ok) {
    if (!policy.retryOnStatus.includes(outcome.response.status)) return false;
    return retryAfterMs === undefined || retryAfterMs <= policy.maxDelayMs;
  }
  return (
    outcome.cause === 'connect-timeout' ||
    outcome.cause === 'connect-failed' ||
    outcome.cause === 'read-timeout'
  );
}

/** Sleeps `ms`, or less when `signal` fires; the timer never outlives the wait. */
function sleepUnlessAborted(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve();
      return;
    }
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Races an injected sleep against `signal` (the listener is removed either way). */
async function raceAbort(wait: Promise<void>, signal?: AbortSignal): Promise<void> {
  if (!signal) return wait;
  if (signal.aborted) return;
  let onAbort = () => {};
  const aborted = new Promise<void>((resolve) => {
    onAbort = () => resolve();
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    await Promise.race([wait, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** Test hooks of {@link Wire}: a fake sleep, a shorter idle-socket timeout. */
export interface WireOptions {
  /** Replaces the backoff sleep (the caller's AbortSignal still cuts it short). */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Idle keep-alive sockets are closed after this long; default {@link IDLE_SOCKET_TIMEOUT_MS}. */
  readonly idleSocketTimeoutMs?: number;
}

/**
 * Sends requests for one client: keeps a keep-alive agent, applies auth, retries safe methods.
 *
 * Idle keep-alive sockets are closed after {@link IDLE_SOCKET_TIMEOUT_MS} (4 s), shorter than
 * common server idle timeouts (Node's 5 s, Go's and proxies' longer ones), so the client does not
 * reuse a socket the server is closing at that moment: such a reuse fails with a reset that an
 * unsafe method (POST, PATCH, DELETE) cannot retry. A `Keep-Alive: timeout=n` hint of the server
 * shortens it further (Node's agent applies the hint).
 */
export class Wire {
  readonly #config: ForgeConfig;
  readonly #agent: http.Agent;
  readonly #sleep: ((ms: number) => Promise<void>) | undefined;

  constructor(config: ForgeConfig, opts: WireOptions = {}) {
    this.#config = config;
    const AgentClass = config.baseUri.startsWith('https:') ? https.Agent : http.Agent;
    // `timeout` of a keep-alive agent is the idle timeout of its free sockets: the agent destroys a
    // free socket on timeout and re-arms it each time a socket returns to the pool. In use, the
    // request's own connect and read timers apply (request.setTimeout overrides it).
    this.#agent = new AgentClass({
      keepAlive: true,
      maxSockets: 8,
      timeout: opts.idleSocketTimeoutMs ?? IDLE_SOCKET_TIMEOUT_MS,
    });
    this.#sleep = opts.sleep;
  }

  /** Closes idle keep-alive connections. */
  close(): void {
    this.#agent.destroy();
  }

  /** The absolute URL of a request. */
  url(req: Pick<WireRequest, 'path' | 'query'>): URL {
    const url = new URL(this.#config.baseUri + req.path);
    for (const [k, v] of req.query ?? []) url.searchParams.append(k, v);
    return url;
  }

  async send(req: WireRequest): Promise<WireOutcome> {
    const started = performance.now();
    const url = this.url(req);
    const uri = redactUri(url.toString());
    const headers = this.#headers(req);
    const payload = req.body === undefined ? undefined : Buffer.from(req.body, 'utf8');
    if (payload) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(payload.length);
    }
    const policy = this.#config.retry;
    const contextOf = (
      attempts: number,
      response?: { status: number; headers: http.IncomingHttpHeaders },
    ) => ({
      operation: req.operation,
      method: req.method,
      uri,
      ...(response ? { status: response.status, ...requestIdOf(response.headers) } : {}),
      durationMs: Math.round(performance.now() - started),
      attempts,
    });
    // A failure the configuration causes is reported once: no attempt can succeed, so none is retried.
    const misconfigured = this.#misconfigured();
    if (misconfigured) return { ok: false, ...misconfigured, context: contextOf(1) };
    let attempts = 0;
    for (;;) {
      attempts += 1;
      const outcome = await this.#attempt(url, req, headers, payload);
      const retryAfter = outcome.ok
        ? parseRetryAfter(headerValue(outcome.response.headers['retry-after']))
        : undefined;
      const last = attempts >= policy.maxAttempts || !shouldRetry(policy, req.method, outcome, retryAfter);
      if (last) {
        if (outcome.ok)
          return { ok: true, response: outcome.response, context: contextOf(attempts, outcome.response) };
        const context: CallContext = contextOf(attempts, outcome.response);
        return { ok: false, cause: outcome.cause, detail: outcome.detail, context };
      }
      const delay = retryDelayMs(policy, attempts, retryAfter);
      await (this.#sleep ? raceAbort(this.#sleep(delay), req.signal) : sleepUnlessAborted(delay, req.signal));
      if (req.signal?.aborted) {
        return {
          ok: false,
          cause: 'aborted',
          detail: 'aborted by the caller',
          context: contextOf(attempts),
        };
      }
    }
  }

  /** The failure every call meets under this configuration, if any (a zero or negative timeout). */
  #misconfigured(): { cause: TransportCause; detail: string } | undefined {
    if (this.#config.connectTimeoutMs <= 0)
      return { cause: 'connect-timeout', detail: 'connect timeout is not positive' };
    if (this.#config.readTimeoutMs <= 0)
      return { cause: 'read-timeout', detail: 'read timeout is not positive' };
    return undefined;
  }

  #headers(req: WireRequest): Record<string, string> {
    const h: Record<string, string> = {
      'user-agent': this.#config.userAgent,
      accept: req.accept ?? 'application/json',
    };
    applyAuth(h, this.#config.auth);
    return h;
  }

  #attempt(url: URL, req: WireRequest, headers: Record<string, string>, payload: Buffer | undefined) {
    const { connectTimeoutMs, readTimeoutMs } = this.#config;
    return new Promise<AttemptOutcome>((resolve) => {
      if (req.signal?.aborted) {
        resolve({ ok: false, cause: 'aborted', detail: 'aborted by the caller' });
        return;
      }
      let settled = false;
      /** Status and headers once the response has begun (§7.2: only too-large or unknown may follow). */
      let began: { status: number; headers: http.IncomingHttpHeaders } | undefined;
      let connectTimer: NodeJS.Timeout | undefined;
      const mod = url.protocol === 'https:' ? https : http;
      const request = mod.request(url, { method: req.method, headers, agent: this.#agent });
      // After the response began, every cause but response-too-large is `unknown` (§7.2: the other
      // causes promise that nothing arrived, which a caller may take as "safe to send again").
      const onAbort = () =>
        began
          ? fail('unknown', 'aborted by the caller while reading the body')
          : fail('aborted', 'aborted by the caller');
      const finish = (o: AttemptOutcome) => {
        if (settled) return;
        settled = true;
        if (connectTimer) clearTimeout(connectTimer);
        req.signal?.removeEventListener('abort', onAbort);
        resolve(o);
      };
      const fail = (cause: TransportCause, detail: string) => {
        finish({ ok: false, cause, detail, ...(began ? { response: began } : {}) });
        request.destroy();
      };
      req.signal?.addEventListener('abort', onAbort, { once: true });
      // The connect timer starts with the socket, not the request: a request queued behind the
      // agent's busy connections has not begun connecting (each of those is bounded by its own
      // timers), and a reused keep-alive socket is connected already.
      request.on('socket', (socket) => {
        const connected = () => {
          if (connectTimer) clearTimeout(connectTimer);
          request.setTimeout(readTimeoutMs, () =>
            began
              ? // The response began: a stall now is not "nothing arrived" (read-timeout), and the
                // status already received must not be taken for an answer.
                fail('unknown', `stalled reading the body: no data for ${readTimeoutMs} ms`)
              : fail('read-timeout', `no response for ${readTimeoutMs} ms`),
          );
        };
        const stillConnecting = socket.connecting || (socket as { pending?: boolean }).pending === true;
        if (!stillConnecting) return connected();
        connectTimer = setTimeout(
          () => fail('connect-timeout', `no connection within ${connectTimeoutMs} ms`),
          connectTimeoutMs,
        );
        socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', connected);
      });
      request.on('error', (err: NodeJS.ErrnoException) => {
        finish({
          ok: false,
          ...classifyError(err, began !== undefined),
          ...(began ? { response: began } : {}),
        });
      });
      request.on('response', (res) => {
        const status = res.statusCode ?? 0;
        began = { status, headers: res.headers };
        const isError = status >= 400;
        const limit = req.maxBodyBytes;
        const declared = Number(res.headers['content-length']);
        const overflow = () => {
          if (isError) {
            // The status arrived and is the answer; its oversized body is dropped.
            finish({ ok: true, response: { status, headers: res.headers, body: Buffer.alloc(0) } });
            res.destroy();
            request.destroy();
          } else {
            fail('response-too-large', `response body exceeds ${limit} bytes`);
            res.destroy();
          }
        };
        if (Number.isFinite(declared) && declared > limit) {
          overflow();
          return;
        }
        const chunks: Buffer[] = [];
        let total = 0;
        res.on('data', (chunk: Buffer) => {
          if (settled) return;
          total += chunk.length;
          if (total > limit) {
            overflow();
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () =>
          finish({ ok: true, response: { status, headers: res.headers, body: Buffer.concat(chunks) } }),
        );
        res.on('error', (err: NodeJS.ErrnoException) => {
          finish({ ok: false, ...classifyError(err, true), ...(began ? { response: began } : {}) });
        });
        res.on('aborted', () => fail('unknown', 'connection closed while reading the response'));
      });
      request.end(payload);
    });
  }
}

const CONNECT_CODES = [
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ETIMEDOUT',
];

/** Classifies a socket error; once the response began, everything is `unknown` (§7.2). */
function classifyError(
  err: NodeJS.ErrnoException,
  responseBegan: boolean,
): { cause: TransportCause; detail: string } {
  const code = err.code ?? '';
  if (responseBegan) return { cause: 'unknown', detail: code || err.message || 'connection failed mid-body' };
  if (err.name === 'AbortError' || code === 'ABORT_ERR')
    return { cause: 'aborted', detail: 'aborted by the caller' };
  if (CONNECT_CODES.includes(code) || code.startsWith('ERR_TLS') || code.includes('CERT')) {
    return { cause: 'connect-failed', detail: code || 'connection failed' };
  }
  return { cause: 'unknown', detail: code || err.name || 'unclassified transport error' };
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function requestIdOf(headers: http.IncomingHttpHeaders): { requestId?: string } {
  const id = headerValue(headers['x-request-id']);
  return id ? { requestId: id } : {};
}

/** Places the credentials of `auth` on the headers (never on the URL). */
export function applyAuth(h: Record<string, string>, auth: Auth): void {
  switch (auth.kind) {
    case 'anonymous':
      return;
    case 'token':
      h.authorization = `token ${auth.token.reveal()}`;
      if (auth.sudo) h.sudo = auth.sudo;
      return;
    case 'basic':
      h.authorization = `Basic ${Buffer.from(`${auth.username}:${auth.password.reveal()}`, 'utf8').toString('base64')}`;
      if (auth.otp) {
        h['x-gitea-otp'] = auth.otp.reveal();
        h['x-forgejo-otp'] = auth.otp.reveal();
      }
      if (auth.sudo) h.sudo = auth.sudo;
      return;
  }
}
