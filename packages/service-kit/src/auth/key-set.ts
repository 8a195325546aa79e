import {
  createRemoteJWKSet,
  customFetch,
  errors,
  type FetchImplementation,
  type JWTVerifyGetKey,
  type RemoteJWKSet,
} from 'jose';
import { Counter, Gauge, type Registry } from 'prom-client';
import { type CheckResult, up } from '../health/index.js';
import type { Logger } from '../logger/index.js';
import type { KeySetSettings } from './config.js';
import { keyFetch, MAX_KEY_SET_BYTES } from './key-fetch.js';

/** Counter of key set fetches by `outcome` (success, failure). */
export const KEY_SET_FETCHES = 'auth_key_set_fetches_total';
/** Gauge: seconds since the key set was last fetched successfully. */
export const KEY_SET_STALENESS = 'auth_key_set_staleness_seconds';

/** Why a key set could not be used at start: the service must not start. */
export class KeySetError extends Error {
  override readonly name = 'KeySetError';
}

export interface KeySetOptions {
  registry?: Registry;
  logger?: Logger;
}

/**
 * A remote key set on top of jose's `createRemoteJWKSet`, which selects keys by `kid`, `alg`,
 * `use` and `key_ops`, parses the set and keeps one fetch in flight. What this adds:
 *
 * - OIDC discovery: `jwks_uri` from `<issuer>/.well-known/openid-configuration`, whose `issuer`
 *   must equal the configured one. A token file's token goes to the issuer's origin and the
 *   `jwks_uri` origin the document names, nowhere else.
 * - Start: `start()` fetches once and throws `KeySetError` when it cannot.
 * - Refresh on a timer every `refreshMs` (the cache bound: a removed key is refused at most that
 *   long after its removal, a new one is fetched at once on first sight of its `kid`). jose's own
 *   expiry is switched off (`cacheMaxAge: Infinity`), because jose throws when a stale set cannot
 *   be fetched again; here a failed fetch keeps the cached keys, counts a failure and says so in
 *   `check()`.
 * - Unknown `kid`: one fetch, then none for `cooldownMs` counted from the last attempt, whether it
 *   succeeded or not (jose counts its cooldown from the last success only, so with the issuer down
 *   every unknown `kid` would fetch). jose's own refetch is switched off (`cooldownDuration:
 *   Infinity`).
 * - `generation` changes whenever the fetched set differs, so the verifier can forget tokens it
 *   accepted with keys that may have gone.
 *
 * `createVerifier` builds one from `AUTH_JWKS_URL` / `AUTH_OIDC_ISSUER`; alone:
 *
 * @example
 * ```ts
 * const keys = new RemoteKeySet(config.keySet, { registry, logger });
 * await keys.start(); // throws KeySetError when the set cannot be fetched
 * const { payload } = await jwtVerify(token, keys.getKey, { algorithms: ['RS256'], audience });
 * ```
 */
export class RemoteKeySet {
  private remote: RemoteJWKSet | undefined;
  private inflight: Promise<void> | undefined;
  private lastAttempt = Number.NEGATIVE_INFINITY;
  private lastSuccess: number | undefined;
  private failure: string | undefined;
  private fetched = '';
  private timer: NodeJS.Timeout | undefined;
  private readonly fetchImpl: FetchImplementation;
  private readonly tokenOrigins = new Set<string>();
  private readonly fetches: Counter<'outcome'> | undefined;
  /** Incremented whenever a fetch brings a different set. */
  generation = 0;

  constructor(
    private readonly settings: KeySetSettings,
    private readonly opts: KeySetOptions = {},
  ) {
    this.tokenOrigins.add(new URL(settings.oidcIssuer ?? settings.jwksUrl ?? '').origin);
    this.fetchImpl = keyFetch({
      ...(settings.caFile === undefined ? {} : { caFile: settings.caFile }),
      ...(settings.tokenFile === undefined
        ? {}
        : { tokenFile: settings.tokenFile, tokenOrigins: this.tokenOrigins }),
    });
    if (opts.registry) {
      this.fetches = metric(opts.registry, KEY_SET_FETCHES, () => {
        const c = new Counter({
          name: KEY_SET_FETCHES,
          help: 'Key set fetches (start, schedule, unknown kid) by outcome',
          labelNames: ['outcome'] as const,
          registers: [opts.registry!],
        });
        for (const outcome of ['success', 'failure']) c.inc({ outcome }, 0);
        return c;
      });
      const staleness = () =>
        this.lastSuccess === undefined ? Number.NaN : (Date.now() - this.lastSuccess) / 1000;
      metric(opts.registry, KEY_SET_STALENESS, () => {
        return new Gauge({
          name: KEY_SET_STALENESS,
          help: 'Seconds since the key set was last fetched successfully; NaN before the first fetch',
          registers: [opts.registry!],
          collect() {
            this.set(staleness());
          },
        });
      });
    }
  }

  /** Discovers (when configured) and fetches the set; throws `KeySetError` when either fails. */
  async start(): Promise<void> {
    const jwksUrl = this.settings.jwksUrl ?? (await this.discover());
    this.remote = createRemoteJWKSet(new URL(jwksUrl), {
      timeoutDuration: this.settings.timeoutMs,
      cooldownDuration: Number.POSITIVE_INFINITY,
      cacheMaxAge: Number.POSITIVE_INFINITY,
      [customFetch]: this.fetchImpl,
    });
    await this.refresh();
    if (this.failure !== undefined) throw new KeySetError(`key set ${jwksUrl}: ${this.failure}`);
    if ((this.remote.jwks()?.keys.length ?? 0) === 0)
      throw new KeySetError(`key set ${jwksUrl} holds no keys`);
    this.timer = setInterval(() => void this.refresh(), this.settings.refreshMs).unref();
  }

  /** Stops the refresh timer. */
  close(): void {
    clearInterval(this.timer);
  }

  /** The key resolver for `jwtVerify`. */
  readonly getKey: JWTVerifyGetKey = async (header, token) => {
    const remote = this.remote;
    if (remote === undefined) throw new KeySetError('the key set was not started');
    try {
      return await remote(header, token);
    } catch (err) {
      if (!(err instanceof errors.JWKSNoMatchingKey)) throw err;
      if (this.inflight === undefined && Date.now() - this.lastAttempt < this.settings.cooldownMs) throw err;
      await this.refresh();
      return remote(header, token);
    }
  };

  /** Readiness detail: `fresh`, or the cached keys still in use and why refreshing fails. Never DOWN. */
  check(): CheckResult {
    if (this.failure === undefined) return up('fresh');
    const since = this.lastSuccess === undefined ? 'never' : new Date(this.lastSuccess).toISOString();
    return up(`cached (fetched ${since}); refresh failing: ${this.failure}`);
  }

  /** One fetch, shared by everyone who asks while it runs; never rejects. */
  private refresh(): Promise<void> {
    this.inflight ??= this.fetchOnce().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  private async fetchOnce(): Promise<void> {
    const remote = this.remote!;
    this.lastAttempt = Date.now();
    try {
      await remote.reload();
      const text = JSON.stringify(remote.jwks());
      if (text !== this.fetched) {
        this.fetched = text;
        this.generation++;
      }
      this.lastSuccess = Date.now();
      if (this.failure !== undefined) this.opts.logger?.info({}, 'key set refreshed again');
      this.failure = undefined;
      this.fetches?.inc({ outcome: 'success' });
    } catch (err) {
      this.failure = describe(err);
      this.fetches?.inc({ outcome: 'failure' });
      this.opts.logger?.warn({ err: this.failure }, 'key set fetch failed; the cached keys stay in use');
    }
  }

  private async discover(): Promise<string> {
    const issuer = this.settings.oidcIssuer!;
    const where = `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
    let doc: { issuer?: unknown; jwks_uri?: unknown };
    try {
      const res = await this.fetchImpl(where, {
        method: 'GET',
        redirect: 'manual',
        headers: new Headers({ accept: 'application/json' }),
        signal: AbortSignal.timeout(this.settings.timeoutMs),
      });
      if (res.status !== 200) throw new Error(`answered ${res.status}`);
      const text = await res.text();
      if (text.length > MAX_KEY_SET_BYTES) throw new Error('document too large');
      doc = JSON.parse(text) as typeof doc;
    } catch (err) {
      throw new KeySetError(`OIDC discovery ${where}: ${describe(err)}`);
    }
    if (doc.issuer !== issuer) {
      throw new KeySetError(
        `OIDC discovery ${where}: names issuer ${JSON.stringify(doc.issuer)}, not ${JSON.stringify(issuer)}`,
      );
    }
    if (typeof doc.jwks_uri !== 'string' || !URL.canParse(doc.jwks_uri)) {
      throw new KeySetError(`OIDC discovery ${where}: no usable jwks_uri`);
    }
    // The issuer's own (TLS-verified) document names where its keys are: the Kubernetes API
    // server names its external address, which needs the same token.
    this.tokenOrigins.add(new URL(doc.jwks_uri).origin);
    return doc.jwks_uri;
  }
}

function describe(err: unknown): string {
  const cause = (err as { cause?: unknown }).cause;
  const base = err instanceof Error ? err.message : String(err);
  const why = cause instanceof Error ? `: ${cause.message}` : '';
  return `${base}${why}`.replace(/\s+/g, ' ').slice(0, 200);
}

/** The registered meter of that name, or a new one (several verifiers may share a registry). */
function metric<T>(registry: Registry, name: string, make: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? make();
}
