/**
 * Cross-site request forgery defences, two layers: every state-changing request must come from
 * this site's own pages (Origin or Sec-Fetch-Site, Hono's `csrf()`), and each form carries a token
 * the server sealed into a cookie (the session's, or the login in progress) that it must match.
 */
import { timingSafeEqual } from 'node:crypto';
import { ApiError } from '@event-observatory/service-kit/errors';
import type { Context, MiddlewareHandler } from 'hono';
import { csrf } from 'hono/csrf';
import type { BodyData } from 'hono/utils/body';

/**
 * Refuses (403) a form post whose Origin is not this site: `publicUrl`'s origin when set (behind a
 * proxy the request's own URL may say http for an https site), else the origin the request came to.
 */
export function sameOrigin(publicUrl?: string): MiddlewareHandler {
  const expected = publicUrl === undefined ? undefined : new URL(publicUrl).origin;
  return csrf({ origin: (origin, c) => origin === (expected ?? new URL(c.req.url).origin) });
}

/** Compares a submitted form token with the expected one in constant time. */
export function sameToken(submitted: unknown, expected: string | undefined): boolean {
  if (typeof submitted !== 'string' || expected === undefined) return false;
  const a = Buffer.from(submitted);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The posted form. A body that is no form (a multipart body without its parts) is the client's
 * mistake: 400 `malformed`, never a server error.
 */
export async function readForm(c: Context): Promise<BodyData> {
  try {
    return await c.req.parseBody();
  } catch {
    throw new ApiError('InvalidArgument', 'the request body is not a form', { reason: 'malformed' });
  }
}
