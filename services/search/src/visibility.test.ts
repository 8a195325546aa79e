import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Viewer } from './viewer.js';
import { OPEN_VIEWER } from './viewer.js';
import { loadVisibility, parseVisibility, VisibilityError } from './visibility.js';

const viewer = (subject: string, groups: string[] = []): Viewer => ({
  subject,
  display: subject,
  groups,
  via: 'oidc',
});

const RULES = `
- groups: [plant-a]
  see: { sources: [/plant/a], typePrefixes: [com.plant.] }
- groups: [plant-b, ops]
  see: { sourcePrefixes: [/plant/b/] }
- users: [carol]
  see: { producers: [ns-c], sources: [/plant/a] }
- groups: [admin]
  see: { all: true }
`;

describe('the scope of a viewer', () => {
  const policy = parseVisibility(RULES, 'rules.yaml');

  it('is the union of the rules matching one of its groups or its subject', () => {
    expect(policy.scopeOf(viewer('carol', ['plant-a', 'ops']))).toEqual({
      sources: ['/plant/a'],
      sourcePrefixes: ['/plant/b/'],
      typePrefixes: ['com.plant.'],
      producers: ['ns-c'],
    });
    expect(policy.scopeOf(viewer('dave', ['admin', 'plant-a']))).toEqual({ all: true });
  });

  it('is nothing when no rule matches, and everything when login is off or for the local admin', () => {
    expect(policy.scopeOf(viewer('eve', ['visitors']))).toEqual({
      sources: [],
      sourcePrefixes: [],
      typePrefixes: [],
      producers: [],
    });
    expect(policy.scopeOf(OPEN_VIEWER)).toEqual({ all: true });
    expect(loadVisibility(undefined).scopeOf(viewer('admin', ['admin'])).all).toBeFalsy();
    expect(loadVisibility(undefined).scopeOf(OPEN_VIEWER)).toEqual({ all: true });
    // The same subject and group from an identity provider get only what rules give them.
    const localAdmin: Viewer = { subject: 'admin', display: 'admin', groups: ['admin'], via: 'local' };
    expect(loadVisibility(undefined).scopeOf(localAdmin)).toEqual({ all: true });
  });

  it("matches Kubernetes' system: names only for a service account the API server vouched for", () => {
    const k8s = parseVisibility(
      `
- users: [system:serviceaccount:ops:exporter]
  see: { producers: [ops] }
- groups: [system:serviceaccounts:billing]
  see: { typePrefixes: [com.billing.] }
`,
      'rules.yaml',
    );
    const exporter = 'system:serviceaccount:ops:exporter';
    const token: Viewer = { subject: exporter, display: exporter, groups: [], via: 'service-account' };
    expect(k8s.scopeOf(token)).toMatchObject({ producers: ['ops'] });
    // The same names from an identity provider or a proxy, which could call a user anything.
    for (const via of ['oidc', 'proxy', 'bearer'] as const) {
      const named: Viewer = { ...token, groups: ['system:serviceaccounts:billing'], via };
      expect(k8s.scopeOf(named), via).toEqual({
        sources: [],
        sourcePrefixes: [],
        typePrefixes: [],
        producers: [],
      });
    }
  });

  it('reads JSON as well as YAML, from a file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'visibility-'));
    const file = join(dir, 'rules.json');
    writeFileSync(file, JSON.stringify([{ users: ['alice'], see: { typePrefixes: ['io.'] } }]));
    expect(loadVisibility(file).scopeOf(viewer('alice')).all).toBeFalsy();
    expect(loadVisibility(file).rules[0]?.see).toMatchObject({ typePrefixes: ['io.'] });
    writeFileSync(file, '');
    expect(loadVisibility(file).rules).toEqual([]);
  });
});

describe('a bad visibility file', () => {
  it.each([
    ['- groups: [a]\n  see: { all: true\n', /rules.yaml: not YAML or JSON/],
    ['groups: [a]', /rules.yaml: expected a list of rules/],
    ['- see: { all: true }', /rule 1: names no groups and no users/],
    [
      '- groups: [a]\n  see: { sources: /plant/a }',
      /rule 1: see: sources: expected a list of non-empty strings/,
    ],
    ['- groups: [a]\n  see: {}', /rule 1: see: sees nothing/],
    ['- groups: [a]\n  see: { all: false }', /rule 1: see: all: expected true/],
    ['- groups: [a]\n  see: { all: true, sources: [x] }', /all: true with lists/],
    ['- groups: [a]\n  see: { source: [x] }', /rule 1: see: unknown key source/],
    ['- groups: [a]\n  sees: { all: true }', /rule 1: unknown key sees/],
    ['- groups: [a, 3]\n  see: { all: true }', /rule 1: groups: expected a list of non-empty strings/],
  ])('%j is refused with a message naming the place', (text, message) => {
    expect(() => parseVisibility(text, 'rules.yaml')).toThrow(VisibilityError);
    expect(() => parseVisibility(text, 'rules.yaml')).toThrow(message);
  });

  it('that cannot be read names the variable', () => {
    expect(() => loadVisibility('/nonexistent/rules.yaml')).toThrow(/SEARCH_VISIBILITY_FILE: cannot read/);
  });
});
