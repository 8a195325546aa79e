/**
 * Pre-flight validation. Every value that ends up in a URL, a header or a body is checked before
 * the request is built; a failure is a {@link ValidationError} and no request is sent.
 */

import type { Branded } from './ids.js';

/**
 * A rejected input. `field` is the lower-camel-case concept (owner, repoName, apiToken, baseUri,
 * pageSize, ...); `message` is short, lowercase, without a trailing period, and never contains
 * credential material.
 */
export interface ValidationError {
  readonly field: string;
  readonly message: string;
}

/** Either a checked value or the reason it was refused. */
export type Validated<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: ValidationError };

export const valid = <T>(value: T): Validated<T> => ({ ok: true, value });
export const invalid = (field: string, message: string): { ok: false; error: ValidationError } => ({
  ok: false,
  error: Object.freeze({ field, message }),
});

/** A user or organisation name accepted by the forge. */
export type Owner = Branded<string, 'Owner'>;
/** A repository name accepted by the forge. */
export type RepoName = Branded<string, 'RepoName'>;
/** A branch name that passes git's ref-name rules. */
export type BranchName = Branded<string, 'BranchName'>;
/** A login (user name) of an account. */
export type Login = Branded<string, 'Login'>;

// Gitea's user-name rule (alphanumerics, dash, underscore, dot; no leading/trailing punctuation,
// no consecutive punctuation) with its 40-character limit.
const OWNER_RE = /^[A-Za-z0-9](?:[A-Za-z0-9]|[-_.](?=[A-Za-z0-9]))*$/;
const REPO_RE = /^[A-Za-z0-9._-]+$/;

function ownerLike(field: string, raw: string): Validated<string> {
  if (typeof raw !== 'string' || raw.length === 0) return invalid(field, 'must not be empty');
  if (raw.length > 40) return invalid(field, 'must be at most 40 characters');
  if (!OWNER_RE.test(raw)) return invalid(field, 'must be letters, digits and single - _ . between them');
  return valid(raw);
}

/** Checks a user or organisation name. */
export function parseOwner(raw: string, field = 'owner'): Validated<Owner> {
  return ownerLike(field, raw) as Validated<Owner>;
}

/** Checks a login (same rules as an owner). */
export function parseLogin(raw: string, field = 'login'): Validated<Login> {
  return ownerLike(field, raw) as Validated<Login>;
}

/** Checks a repository name. */
export function parseRepoName(raw: string, field = 'repoName'): Validated<RepoName> {
  if (typeof raw !== 'string' || raw.length === 0) return invalid(field, 'must not be empty');
  if (raw.length > 100) return invalid(field, 'must be at most 100 characters');
  if (raw === '.' || raw === '..') return invalid(field, 'must not be "." or ".."');
  if (!REPO_RE.test(raw)) return invalid(field, 'must be letters, digits, "-", "_" or "."');
  if (raw.endsWith('.git') || raw.endsWith('.wiki')) return invalid(field, 'must not end in .git or .wiki');
  return valid(raw as RepoName);
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to find control characters
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Checks a branch name against git's ref-name rules (git check-ref-format --branch): no control
 * characters, space, `~ ^ : ? * [ \`, no `..`, `@{`, `//`, no component starting with `.` or
 * ending in `.lock`, not starting or ending with `/`, not ending with `.`, not `@`.
 */
export function parseBranchName(raw: string, field = 'branch'): Validated<BranchName> {
  if (typeof raw !== 'string' || raw.length === 0) return invalid(field, 'must not be empty');
  if (raw.length > 255) return invalid(field, 'must be at most 255 characters');
  if (CONTROL.test(raw) || /[ ~^:?*[\\]/.test(raw)) return invalid(field, 'contains a character git forbids');
  if (raw.includes('..') || raw.includes('@{') || raw.includes('//')) {
    return invalid(field, 'contains a sequence git forbids');
  }
  if (raw === '@' || raw.startsWith('/') || raw.endsWith('/') || raw.endsWith('.') || raw.startsWith('-')) {
    return invalid(field, 'is not a valid branch name');
  }
  for (const part of raw.split('/')) {
    if (part.startsWith('.') || part.endsWith('.lock')) return invalid(field, 'is not a valid branch name');
  }
  return valid(raw as BranchName);
}

/** Checks a positive identifier (pull request number, review id, label id, ...). */
export function checkPositiveId(field: string, n: number): ValidationError | undefined {
  if (!Number.isSafeInteger(n) || n <= 0) return { field, message: 'must be a positive integer' };
  return undefined;
}

/** Checks a text that must carry something besides white space. */
export function checkRequiredText(
  field: string,
  text: string | undefined,
  max?: number,
): ValidationError | undefined {
  if (typeof text !== 'string' || text.trim().length === 0) return { field, message: 'must not be blank' };
  if (max !== undefined && text.length > max) return { field, message: `must be at most ${max} characters` };
  return undefined;
}

/** True when the text contains an ASCII control character (C0 or DEL). */
export function hasControlCharacter(text: string): boolean {
  return CONTROL.test(text);
}

/** Returns the first error of a list of checks, or undefined. */
export function firstError(...checks: (ValidationError | undefined)[]): ValidationError | undefined {
  return checks.find((c) => c !== undefined);
}
