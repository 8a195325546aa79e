/**
 * Who sees which events: the rules of `SEARCH_VISIBILITY_FILE` (YAML or JSON) turn a viewer into
 * the scope PostgreSQL enforces on each of its reads (`scopedPool` of the store). A viewer's scope
 * is the union of the rules that match it (by one of its groups or its subject); no matching rule,
 * no events; login switched off (`via: 'open'`) and the local admin (`via: 'local'`), every event.
 * README, "Visibility".
 *
 * @example
 * const policy = parseVisibility(`
 * - groups: [plant-a]
 *   see: { sourcePrefixes: [/plant/a/] }
 * - users: [alice@example.com]
 *   see: { all: true }
 * `, 'rules.yaml');
 * policy.scopeOf({ subject: 'bob', display: 'bob', groups: ['plant-a'], via: 'oidc' });
 * // { sources: [], sourcePrefixes: ['/plant/a/'], typePrefixes: [], producers: [] }
 */
import { readFileSync } from 'node:fs';
import { EMPTY_SCOPE, type PartialScope, type ReadScope, WHOLE_SCOPE } from '@event-observatory/store';
import { parse } from 'yaml';
import type { Viewer } from './viewer.js';

export interface VisibilityRule {
  groups: readonly string[];
  users: readonly string[];
  see: ReadScope;
}

export interface VisibilityPolicy {
  rules: readonly VisibilityRule[];
  scopeOf(viewer: Viewer): ReadScope;
}

/** A visibility file the service refuses to start with; the message names the file and the place. */
export class VisibilityError extends Error {
  override name = 'VisibilityError';
}

const LISTS = ['sources', 'sourcePrefixes', 'typePrefixes', 'producers'] as const;

/** The rules of `text`, the content of the file `file` (named in errors). */
export function parseVisibility(text: string, file: string): VisibilityPolicy {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new VisibilityError(`${file}: not YAML or JSON: ${(err as Error).message.split('\n')[0]}`);
  }
  const list = doc === null || doc === undefined ? [] : doc;
  if (!Array.isArray(list)) throw new VisibilityError(`${file}: expected a list of rules`);
  return policyOf(list.map((rule, i) => ruleOf(rule, `${file}: rule ${i + 1}`)));
}

/** The policy of the file at `path`; no path, no rules (every viewer but an open one sees nothing). */
export function loadVisibility(path: string | undefined): VisibilityPolicy {
  if (!path) return policyOf([]);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new VisibilityError(`SEARCH_VISIBILITY_FILE: cannot read ${path}: ${(err as Error).message}`);
  }
  return parseVisibility(text, path);
}

function policyOf(rules: VisibilityRule[]): VisibilityPolicy {
  return {
    rules,
    scopeOf(viewer) {
      // Login off, or the evaluation profile's one local admin (as Grafana's admin): everything.
      if (viewer.via === 'open' || viewer.via === 'local') return WHOLE_SCOPE;
      const { subject, groups } = kubernetesNamesChecked(viewer);
      const matching = rules.filter(
        (r) => r.users.includes(subject) || r.groups.some((g) => groups.includes(g)),
      );
      return unionOf(matching.map((r) => r.see));
    },
  };
}

/**
 * The viewer's subject and groups as rules may match them. Names under Kubernetes' reserved
 * `system:` prefix (`system:serviceaccount:ops:exporter`, `system:serviceaccounts:ops`) name a
 * service account only when the API server vouched for it (a service-account token); from an
 * identity provider or a proxy, which could call a user anything, they match no rule.
 */
function kubernetesNamesChecked(viewer: Viewer): { subject: string; groups: readonly string[] } {
  if (viewer.via === 'service-account') return viewer;
  const reserved = (name: string) => name.startsWith('system:');
  return {
    subject: reserved(viewer.subject) ? '' : viewer.subject,
    groups: viewer.groups.filter((g) => !reserved(g)),
  };
}

/** The rows any of `scopes` admits. */
export function unionOf(scopes: readonly ReadScope[]): ReadScope {
  if (scopes.some((s) => s.all)) return WHOLE_SCOPE;
  const union: Record<(typeof LISTS)[number], string[]> = {
    sources: [],
    sourcePrefixes: [],
    typePrefixes: [],
    producers: [],
  };
  for (const s of scopes as PartialScope[])
    for (const key of LISTS) union[key] = [...new Set([...union[key], ...s[key]])];
  return union;
}

function ruleOf(raw: unknown, where: string): VisibilityRule {
  const rule = objectOf(raw, where, ['groups', 'users', 'see']);
  const groups = stringsOf(rule.groups, `${where}: groups`);
  const users = stringsOf(rule.users, `${where}: users`);
  if (groups.length + users.length === 0)
    throw new VisibilityError(`${where}: names no groups and no users; it would match nobody`);
  return { groups, users, see: scopeOfRule(rule.see, `${where}: see`) };
}

function scopeOfRule(raw: unknown, where: string): ReadScope {
  const see = objectOf(raw, where, ['all', ...LISTS]);
  if (see.all !== undefined && see.all !== true)
    throw new VisibilityError(`${where}: all: expected true (leave it out to list what is seen)`);
  const scope = { ...EMPTY_SCOPE };
  for (const key of LISTS) scope[key] = stringsOf(see[key], `${where}: ${key}`);
  if (see.all === true) {
    if (LISTS.some((k) => scope[k].length)) throw new VisibilityError(`${where}: all: true with lists`);
    return WHOLE_SCOPE;
  }
  if (LISTS.every((k) => scope[k].length === 0))
    throw new VisibilityError(`${where}: sees nothing; expected all: true or one of ${LISTS.join(', ')}`);
  return scope;
}

function objectOf(raw: unknown, where: string, keys: readonly string[]): Record<string, unknown> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new VisibilityError(`${where}: expected a mapping`);
  const unknown = Object.keys(raw).filter((k) => !keys.includes(k));
  if (unknown.length)
    throw new VisibilityError(`${where}: unknown key ${unknown.join(', ')}; expected ${keys.join(', ')}`);
  return raw as Record<string, unknown>;
}

function stringsOf(raw: unknown, where: string): string[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw) || raw.some((v) => typeof v !== 'string' || v === ''))
    throw new VisibilityError(`${where}: expected a list of non-empty strings`);
  return raw as string[];
}
