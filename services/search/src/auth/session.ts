/**
 * The login session: a sealed cookie (JWE, `dir` + A256GCM, so encrypted and authenticated) that
 * carries the viewer and its own expiry. A cookie that does not open, whose expiry passed, or whose
 * session was ended by a logout (`ended-sessions.ts`: the one record kept on the server), is no
 * session. A second, short-lived sealed cookie carries one login in progress (OIDC state, nonce
 * and PKCE verifier; the local form's token).
 */
import { createHash, randomBytes } from 'node:crypto';
import { Remembered } from '@event-observatory/service-kit/auth';
import type { Logger } from '@event-observatory/service-kit/logger';
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { EncryptJWT, jwtDecrypt } from 'jose';
import type { SessionConfig } from '../config.js';
import type { Viewer } from '../viewer.js';
import type { EndedSessions } from './ended-sessions.js';

/** A signed-in viewer and the token its state-changing forms carry. */
export interface Session {
  viewer: Viewer;
  /** Synchronizer token of the logout form (and any other form). */
  csrf: string;
}

/** One login in progress; what the callback (or the form's post) checks. */
export interface LoginFlow {
  /** Where to go after the login: a path of this site. */
  next: string;
  /** Token of the local login form. */
  csrf?: string;
  state?: string;
  nonce?: string;
  verifier?: string;
}

/**
 * Longest sealed cookie set: browsers drop a cookie over 4096 bytes (name, value and attributes),
 * and a dropped session cookie would send the browser round the login for ever.
 */
export const MAX_COOKIE_BYTES = 3_800;

/** The viewer does not fit in a cookie (usually: a great many groups). */
export class SessionTooLargeError extends Error {
  override readonly name = 'SessionTooLargeError';
}

/** How long one login may take, from `/login` to the callback or the form's post. */
export const LOGIN_FLOW_TTL_MS = 10 * 60_000;

export interface SessionStore {
  /** Seals a session for the viewer and sets its cookie. */
  start(c: Context, viewer: Viewer): Promise<void>;
  /** The request's session, or undefined when it has none that opens, is unexpired and not ended. */
  read(c: Context): Promise<Session | undefined>;
  /** Clears the cookie, and records its session as ended so that no copy of the cookie opens it. */
  end(c: Context): Promise<void>;
  beginFlow(c: Context, flow: LoginFlow): Promise<void>;
  /** The login in progress, removed as it is read (each one is used once). */
  takeFlow(c: Context): Promise<LoginFlow | undefined>;
}

export interface SessionStoreOptions {
  /**
   * `SEARCH_PUBLIC_URL`. The cookies are Secure unless it is an `http:` one: behind a
   * TLS-terminating proxy every request arrives as http, so the service cannot tell an https site
   * from a plain one, and only the operator's explicit `http:` says the site has no TLS.
   */
  publicUrl?: string;
  /** Where logouts are recorded and looked up; without it a logout only clears the cookie. */
  ended?: EndedSessions;
  logger?: Logger;
  /** For tests that seal a session in the past. */
  now?: () => number;
}

/** Sessions sealed under `config.secret`. */
export function sessionStore(config: SessionConfig, opts: SessionStoreOptions = {}): SessionStore {
  const { publicUrl, ended, logger, now = Date.now } = opts;
  // The cookie key is derived, so the same secret never keys anything else directly.
  const key = createHash('sha256').update('observatory-search-session\0').update(config.secret).digest();
  const secure = publicUrl === undefined || new URL(publicUrl).protocol !== 'http:';
  // `__Host-` binds a Secure cookie to this host and path `/` (no Domain can widen it).
  const prefix = secure ? '__Host-' : '';
  const names = { session: `${prefix}observatory-session`, flow: `${prefix}observatory-login` };
  const cookie = (maxAgeMs: number) =>
    ({ path: '/', httpOnly: true, sameSite: 'Lax', secure, maxAge: Math.floor(maxAgeMs / 1000) }) as const;

  const seal = async (purpose: string, claims: Record<string, unknown>, ttlMs: number) => {
    const iat = Math.floor(now() / 1000);
    const sealed = await new EncryptJWT(claims)
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
      .setAudience(purpose)
      .setIssuedAt(iat)
      .setExpirationTime(iat + Math.floor(ttlMs / 1000))
      .encrypt(key);
    if (sealed.length > MAX_COOKIE_BYTES) {
      throw new SessionTooLargeError(`the ${purpose} cookie would be ${sealed.length} bytes`);
    }
    return sealed;
  };
  const opened = new Remembered<OpenedSession>(OPENED_SESSIONS);
  const open = async (purpose: string, token: string | undefined) => {
    if (token === undefined) return undefined;
    try {
      const { payload } = await jwtDecrypt(token, key, {
        audience: purpose,
        keyManagementAlgorithms: ['dir'],
        contentEncryptionAlgorithms: ['A256GCM'],
        currentDate: new Date(now()),
        requiredClaims: ['exp'],
      });
      return payload;
    } catch {
      // Forged, tampered, sealed under another secret or expired: all the same, no session.
      return undefined;
    }
  };

  /** The session of the request's cookie, expired or not, ended or not. */
  const openSession = async (c: Context): Promise<OpenedSession | undefined> => {
    const token = getCookie(c, names.session);
    if (token === undefined) return undefined;
    const known = opened.get(token, (e) => e.expiresAt > now());
    if (known) return known;
    const payload = await open('session', token);
    if (!(payload && isSession(payload))) return undefined;
    const entry = {
      session: { viewer: payload.viewer, csrf: payload.csrf },
      expiresAt: (payload.exp as number) * 1000,
      id: sessionId(payload.csrf),
    };
    opened.set(token, entry);
    return entry;
  };

  return {
    async start(c, viewer) {
      const session: Session = { viewer, csrf: randomBytes(18).toString('base64url') };
      setCookie(
        c,
        names.session,
        await seal('session', { ...session }, config.maxAgeMs),
        cookie(config.maxAgeMs),
      );
    },
    async read(c) {
      const entry = await openSession(c);
      if (!entry || (ended && (await ended.isEnded(entry.id)))) return undefined;
      return entry.session;
    },
    async end(c) {
      const entry = await openSession(c);
      deleteCookie(c, names.session, cookie(0));
      if (!(entry && ended)) return;
      // The browser forgets the cookie either way; a copy of it stays valid until its expiry when
      // the record cannot be written (a replica and no primary named, the store away).
      await ended.end(entry.id, entry.expiresAt).catch((err: unknown) => {
        logger?.warn({ err }, 'the session was logged out but could not be recorded as ended');
      });
    },
    async beginFlow(c, flow) {
      setCookie(
        c,
        names.flow,
        await seal('login', { ...flow }, LOGIN_FLOW_TTL_MS),
        cookie(LOGIN_FLOW_TTL_MS),
      );
    },
    async takeFlow(c) {
      const payload = await open('login', getCookie(c, names.flow));
      if (getCookie(c, names.flow) !== undefined) deleteCookie(c, names.flow, cookie(0));
      return payload && typeof payload.next === 'string' ? (payload as unknown as LoginFlow) : undefined;
    },
  };
}

/**
 * Session cookies remembered once opened, each until its expiry: opening one (a JWE's decryption
 * through Web Crypto) cost over ten times a bare request's CPU (bench/search/auth.ts), paid by
 * every page, export and tail of a logged-in reader. A cookie is immutable, so a hit is the same
 * session.
 */
const OPENED_SESSIONS = 1_024;

interface OpenedSession {
  session: Session;
  /** When the cookie expires (ms). */
  expiresAt: number;
  /** What the ended sessions record: a digest of the session's own random token, not the cookie. */
  id: string;
}

const sessionId = (csrf: string) =>
  createHash('sha256').update('observatory-session-id\0').update(csrf).digest('base64url');

function isSession(p: Record<string, unknown>): p is Record<string, unknown> & Session {
  const v = p.viewer as Partial<Viewer> | undefined;
  return (
    typeof p.csrf === 'string' &&
    typeof v?.subject === 'string' &&
    typeof v.display === 'string' &&
    Array.isArray(v.groups) &&
    v.groups.every((g) => typeof g === 'string')
  );
}

/** Longest return path kept (it travels in the login cookie); a longer one returns to `/`. */
const MAX_RETURN_PATH = 2_000;

/**
 * A path of this site to return to after the login, as a URL writes it (printable ASCII: it goes
 * into a Location header); anything else (another origin, a space or control character, an
 * overlong one) is `/`.
 */
export function returnPath(raw: string | undefined): string {
  const ok = raw !== undefined && raw.length <= MAX_RETURN_PATH && /^\/(?![/\\])[!-~]*$/.test(raw);
  return ok ? raw : '/';
}
