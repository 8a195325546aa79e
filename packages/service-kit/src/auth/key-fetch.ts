import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { request } from 'node:https';
import type { FetchImplementation } from 'jose';

/** The largest discovery document or key set read; a bigger answer is refused. */
export const MAX_KEY_SET_BYTES = 1 << 20;

export interface KeyFetchOptions {
  /** PEM authority file trusted (instead of the system's) for https. */
  caFile?: string;
  /** A file whose content is sent as `authorization: Bearer`, read again at every fetch. */
  tokenFile?: string;
  /**
   * The only origins the token is sent to: the configured issuer's or key set's, and the
   * `jwks_uri` origin the issuer's discovery document names (added by the caller once read).
   */
  tokenOrigins?: ReadonlySet<string>;
}

/**
 * The fetch used for discovery and the key set: Node's `fetch` unless a CA file is given (then a
 * plain `https` GET trusting that authority: Node's `fetch` takes no CA). A token file serves the
 * Kubernetes API server, whose discovery endpoints need an authenticated caller; the token goes to
 * `tokenOrigins` only. Redirects are not followed.
 *
 * @example
 * ```ts
 * const origins = new Set([new URL(issuer).origin]);
 * createRemoteJWKSet(url, { [customFetch]: keyFetch({ caFile, tokenFile, tokenOrigins: origins }) });
 * ```
 */
export function keyFetch(opts: KeyFetchOptions): FetchImplementation {
  const ca = opts.caFile === undefined ? undefined : readFileSync(opts.caFile);
  return async (url, init) => {
    const headers = new Headers(init.headers);
    if (opts.tokenFile !== undefined && opts.tokenOrigins?.has(new URL(url).origin)) {
      headers.set('authorization', `Bearer ${(await readFile(opts.tokenFile, 'utf8')).trim()}`);
    }
    if (ca === undefined) return fetch(url, { ...init, headers });
    return httpsGet(url, headers, ca, init.signal);
  };
}

function httpsGet(url: string, headers: Headers, ca: Buffer, signal: AbortSignal): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', ca, headers: Object.fromEntries(headers), signal }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_KEY_SET_BYTES) res.destroy(new Error(`answer larger than ${MAX_KEY_SET_BYTES} bytes`));
        else chunks.push(chunk);
      });
      res.on('error', reject);
      res.on('end', () => resolve(new Response(Buffer.concat(chunks), { status: res.statusCode ?? 500 })));
    });
    req.on('error', reject);
    req.end();
  });
}
