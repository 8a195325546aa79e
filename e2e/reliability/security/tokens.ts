/**
 * Hand-made JWTs for the attack suite: any header, any claims, any signature, so a token can be
 * exactly as wrong as an attacker makes it (`alg: none`, an HMAC signed with an RSA public key,
 * a payload edited after signing). Built with node:crypto only, never with the library under test.
 */
import { createHmac, type KeyObject, sign } from 'node:crypto';

const b64url = (data: string | Buffer) => Buffer.from(data).toString('base64url');

export type Claims = Record<string, unknown>;

/** `header.payload` of a token, base64url-encoded JSON each. */
export function signingInput(header: Claims, claims: Claims): string {
  return `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
}

/** An HS256/384/512 token signed with `secret` (any bytes, e.g. an RSA public key's PEM). */
export function hmacToken(claims: Claims, secret: string | Buffer, header: Claims = {}): string {
  const alg = (header.alg as string | undefined) ?? 'HS256';
  const input = signingInput({ alg, typ: 'JWT', ...header }, claims);
  const hash = `sha${alg.slice(2)}`;
  return `${input}.${createHmac(hash, secret).update(input).digest('base64url')}`;
}

/** An RS256 token signed with `privateKey`. */
export function rsaToken(claims: Claims, privateKey: KeyObject, header: Claims = {}): string {
  const input = signingInput({ alg: 'RS256', typ: 'JWT', ...header }, claims);
  return `${input}.${sign('sha256', Buffer.from(input), privateKey).toString('base64url')}`;
}

/** An unsecured token (`alg: none`, empty signature: RFC 7519 section 6). */
export function unsecuredToken(claims: Claims): string {
  return `${signingInput({ alg: 'none', typ: 'JWT' }, claims)}.`;
}

/** `token` with its payload replaced by `claims` and its signature kept. */
export function tamperedToken(token: string, claims: Claims): string {
  const [header, , signature] = token.split('.');
  return `${header}.${b64url(JSON.stringify(claims))}.${signature}`;
}

/** Seconds since the epoch, as `exp`/`nbf`/`iat` count. */
export const nowSeconds = () => Math.floor(Date.now() / 1000);
