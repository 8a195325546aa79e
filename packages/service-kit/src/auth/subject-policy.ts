import { configProblem } from '../config/index.js';

/** One entry of `AUTH_SUBJECT_SCOPES`: subjects matching `pattern` are granted `scopes`. */
export interface SubjectGrant {
  pattern: string;
  scopes: readonly string[];
  /** `pattern` compiled: `*` matches any run of characters other than `:`. */
  matcher: RegExp;
}

/**
 * Parses a subject policy: entries separated by `;` or new lines, each `<subject glob>=<scopes>`
 * with the scopes space-separated. In the glob `*` matches any run of characters except `:`, so
 * it stays within one segment of a Kubernetes subject
 * (`system:serviceaccount:<namespace>:<name>`): `system:serviceaccount:payments:*` is every
 * service account of the namespace `payments`, `system:serviceaccount:*:exporter` every
 * `exporter` account of any namespace, which is refused unless `opts.anyNamespace` (whoever may
 * create a namespace could mint such an account). Nothing else is special.
 *
 * @example
 * ```ts
 * parseSubjectScopes('system:serviceaccount:payments:*=events:write; system:serviceaccount:ops:replayer=events:write events:admin');
 * ```
 */
export function parseSubjectScopes(
  raw: string,
  opts: { anyNamespace?: boolean; acknowledge?: string } = {},
): SubjectGrant[] {
  const grants: SubjectGrant[] = [];
  for (const entry of raw.split(/[;\n]/).map((e) => e.trim())) {
    if (entry === '') continue;
    const eq = entry.indexOf('=');
    const pattern = eq < 0 ? '' : entry.slice(0, eq).trim();
    const scopes =
      eq < 0
        ? []
        : entry
            .slice(eq + 1)
            .split(/\s+/)
            .filter((s) => s !== '');
    if (pattern === '' || /\s/.test(pattern) || scopes.length === 0) {
      throw configProblem(
        `expected entries <subject glob>=<scope> [scope...] separated by ";", got ${JSON.stringify(entry)}`,
      );
    }
    if (!opts.anyNamespace && spansNamespaces(pattern)) {
      throw configProblem(
        `${JSON.stringify(pattern)} has a * in the namespace segment: whoever may create a matching namespace gets these scopes; name the namespace, or set ${opts.acknowledge ?? 'anyNamespace'}=true to accept that`,
      );
    }
    grants.push({ pattern, scopes, matcher: globRegExp(pattern) });
  }
  return grants;
}

/** `glob` as a whole-string expression: `*` is any run of characters other than `:`. */
function globRegExp(glob: string): RegExp {
  const source = glob
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^:]*');
  return new RegExp(`^${source}$`);
}

/** True when `pattern` matches service accounts (`system:serviceaccount:<ns>:<name>`) of a namespace glob. */
function spansNamespaces(pattern: string): boolean {
  const [system, account, namespace, ...rest] = pattern.split(':');
  return (
    rest.length === 1 &&
    globRegExp(system!).test('system') &&
    globRegExp(account!).test('serviceaccount') &&
    namespace!.includes('*')
  );
}

/** The scopes `policy` grants to `subject` (the union of every matching entry). */
export function grantedScopes(policy: readonly SubjectGrant[], subject: string): string[] {
  return policy.filter((g) => g.matcher.test(subject)).flatMap((g) => g.scopes);
}
