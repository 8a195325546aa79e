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
  /** A JSON body; serialised as is. */
  readonly body?: unknown;
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
  | { ok: false; cause: TransportCause; detail: string; responseBegan: boolean };

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

/** Delay before retry number `retry` (1-based), honouring Retry-After within the policy's cap. */
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

/** Whether an outcome of a safe request deserves another attempt under the policy. */
export function shouldRetry(policy: RetryPolicy, method: string, outcome: AttemptOutcome): boolean {
  if (!isSafeMethod(method)) return false;
  if (outcome.ok) return policy.retryOnStatus.includes(outcome.response.status);
  return (
    outcome.cause === 'connect-timeout' ||
    outcome.cause === 'connect-failed' ||
    outcome.cause === 'read-timeout'
  );
}

/** Sends requests for one client: keeps a keep-alive agent, applies auth, retries safe methods. */
export class Wire {
  readonly #config: ForgeConfig;
  readonly #agent: http.Agent;
  readonly #sleep: (ms: number) => Promise<void>;

  constructor(config: ForgeConfig, opts: { sleep?: (ms: number) => Promise<void> } = {}) {
    this.#config = config;
    const AgentClass = config.baseUri.startsWith('https:') ? https.Agent : http.Agent;
    this.#agent = new AgentClass({ keepAlive: true, maxSockets: 8 });
    this.#sleep = opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
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
    const payload = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body), 'utf8');
    if (payload) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(payload.length);
    }
    const policy = this.#config.retry;
    let attempts = 0;
    for (;;) {
      attempts += 1;
      const outcome = await this.#attempt(url, req, headers, payload);
      const last = attempts >= policy.maxAttempts || !shouldRetry(policy, req.method, outcome);
      if (last) {
        const context: CallContext = {
          operation: req.operation,
          method: req.method,
          uri,
          ...(outcome.ok
            ? { status: outcome.response.status, ...requestIdOf(outcome.response.headers) }
            : {}),
          durationMs: Math.round(performance.now() - started),
          attempts,
        };
        if (outcome.ok) return { ok: true, response: outcome.response, context };
        return { ok: false, cause: outcome.cause, detail: outcome.detail, context };
      }
      const retryAfter = outcome.ok
        ? parseRetryAfter(headerValue(outcome.response.headers['retry-after']))
        : undefined;
      await this.#sleep(retryDelayMs(policy, attempts, retryAfter));
      if (req.signal?.aborted) {
        return {
          ok: false,
          cause: 'aborted',
          detail: 'aborted by the caller',
          context: {
            operation: req.operation,
            method: req.method,
            uri,
            durationMs: Math.round(performance.now() - started),
            attempts,
          },
        };
      }
    }
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
      if (connectTimeoutMs <= 0) {
        resolve({
          ok: false,
          cause: 'connect-timeout',
          detail: 'connect timeout is not positive',
          responseBegan: false,
        });
        return;
      }
      if (readTimeoutMs <= 0) {
        resolve({
          ok: false,
          cause: 'read-timeout',
          detail: 'read timeout is not positive',
          responseBegan: false,
        });
        return;
      }
      if (req.signal?.aborted) {
        resolve({ ok: false, cause: 'aborted', detail: 'aborted by the caller', responseBegan: false });
        return;
      }
      let settled = false;
      let responseBegan = false;
      let connectTimer: NodeJS.Timeout | undefined;
      const mod = url.protocol === 'https:' ? https : http;
      const request = mod.request(url, { method: req.method, headers, agent: this.#agent });
      const onAbort = () => fail('aborted', 'aborted by the caller');
      const finish = (o: AttemptOutcome) => {
        if (settled) return;
        settled = true;
        if (connectTimer) clearTimeout(connectTimer);
        req.signal?.removeEventListener('abort', onAbort);
        resolve(o);
      };
      const fail = (cause: TransportCause, detail: string) => {
        finish({ ok: false, cause, detail, responseBegan });
        request.destroy();
      };
      req.signal?.addEventListener('abort', onAbort, { once: true });
      connectTimer = setTimeout(
        () => fail('connect-timeout', `no connection within ${connectTimeoutMs} ms`),
        connectTimeoutMs,
      );
      request.on('socket', (socket) => {
        const connected = () => {
          if (connectTimer) clearTimeout(connectTimer);
          request.setTimeout(readTimeoutMs, () => fail('read-timeout', `no data for ${readTimeoutMs} ms`));
        };
        const stillConnecting = socket.connecting || (socket as { pending?: boolean }).pending === true;
        if (!stillConnecting) connected();
        else socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', connected);
      });
      request.on('error', (err: NodeJS.ErrnoException) => {
        finish({ ok: false, ...classifyError(err, responseBegan), responseBegan });
      });
      request.on('response', (res) => {
        responseBegan = true;
        const status = res.statusCode ?? 0;
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
        res.on('error', (err: NodeJS.ErrnoException) =>
          finish({ ok: false, ...classifyError(err, true), responseBegan }),
        );
        res.on('aborted', () => fail('unknown', 'connection closed while reading the response'));
      });
      request.end(payload);
    });
  }
}

function classifyError(
  err: NodeJS.ErrnoException,
  responseBegan: boolean,
): { cause: TransportCause; detail: string } {
  const code = err.code ?? '';
  if (err.name === 'AbortError' || code === 'ABORT_ERR')
    return { cause: 'aborted', detail: 'aborted by the caller' };
  if (!responseBegan) {
    const connectCodes = [
      'ECONNREFUSED',
      'ECONNRESET',
      'ENOTFOUND',
      'EAI_AGAIN',
      'EHOSTUNREACH',
      'ENETUNREACH',
      'EPIPE',
      'ETIMEDOUT',
    ];
    if (connectCodes.includes(code) || code.startsWith('ERR_TLS') || code.includes('CERT')) {
      return { cause: 'connect-failed', detail: code || 'connection failed' };
    }
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
