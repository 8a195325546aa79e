/**
 * The ingestion API's ways in ("Rollouts and ingress"; installed through Traefik in
 * e2e/cluster/ingress.test.ts): the Ingress routes the API, its docs and its description with the
 * body-size setting an 8 MiB batch needs; the Gateway API HTTPRoute does the same when asked and
 * names its Gateway; `kubeVersion` admits the supported Kubernetes releases only.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CHART_DIR } from '../src/paths.js';
import { helm, type K8sObject, REQUIRED_VALUES, render, renderError, setArgs } from './helm.js';

const find = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind);
const ingressValues = {
  'ingest.ingress.enabled': true,
  'ingest.ingress.host': 'events.test',
  'ingest.ingress.tlsSecret': 'events-tls',
};
const paths = [
  { path: '/v1', pathType: 'Prefix' },
  { path: '/docs', pathType: 'Prefix' },
  { path: '/openapi.json', pathType: 'Exact' },
];

describe('the Ingress', () => {
  it('refuses to render without a TLS Secret unless plain HTTP is asked for by name', () => {
    const plain = { ...ingressValues, 'ingest.ingress.tlsSecret': '' };
    expect(renderError(setArgs({ ...REQUIRED_VALUES, ...plain }))).toMatch(
      /ingest\.ingress\.tlsSecret: name the Secret .* or set ingest\.ingress\.allowInsecure=true/,
    );
    const [insecure] = find(render({ ...plain, 'ingest.ingress.allowInsecure': true }), 'Ingress');
    expect(insecure?.spec.tls).toEqual([]);
    const [secure] = find(render(ingressValues), 'Ingress');
    expect(secure?.spec.tls).toEqual([{ hosts: ['events.test'], secretName: 'events-tls' }]);
  });

  it('routes /v1, /docs and /openapi.json to the ingest Service', () => {
    const [ingress] = find(render(ingressValues), 'Ingress');
    const rule = ingress?.spec.rules[0];
    expect(rule.host).toBe('events.test');
    expect(rule.http.paths).toEqual(
      paths.map((p) => ({ ...p, backend: { service: { name: 'obs-ingest', port: { number: 8080 } } } })),
    );
  });

  it('lets ingress-nginx pass a batch of 8 MiB (proxy-body-size), which the operator may change', () => {
    const [plain] = find(render(ingressValues), 'Ingress');
    expect(plain?.metadata.annotations).toMatchObject({
      'nginx.ingress.kubernetes.io/proxy-body-size': '9m',
    });
    const [changed] = find(render({ ...ingressValues, 'ingest.ingress.maxBodySize': '16m' }), 'Ingress');
    expect(changed?.metadata.annotations?.['nginx.ingress.kubernetes.io/proxy-body-size']).toBe('16m');
    // An annotation the operator writes wins over the value.
    const [own] = find(
      render({
        ...ingressValues,
        'ingest.ingress.annotations.nginx\\.ingress\\.kubernetes\\.io/proxy-body-size': '20m',
      }),
      'Ingress',
    );
    expect(own?.metadata.annotations?.['nginx.ingress.kubernetes.io/proxy-body-size']).toBe('20m');
  });
});

describe('the Gateway API HTTPRoute', () => {
  const routeArgs = [
    ...setArgs({ ...REQUIRED_VALUES, 'ingest.httpRoute.enabled': true }),
    '--set-json',
    'ingest.httpRoute.parentRefs=[{"name":"public","namespace":"gateways","sectionName":"https"}]',
    '--set-json',
    'ingest.httpRoute.hostnames=["events.test"]',
  ];

  it('is off by default', () => {
    expect(find(render(), 'HTTPRoute')).toEqual([]);
  });

  it('attaches to the named Gateway and routes the same paths to the ingest Service', () => {
    const res = helm(['template', 'obs', CHART_DIR, '--namespace', 'observatory', ...routeArgs]);
    expect(res.status, res.stderr).toBe(0);
    const route = res.stdout
      .split('\n---\n')
      .map((doc) => parse(doc) as K8sObject | null)
      .find((o) => o?.kind === 'HTTPRoute');
    expect(route?.apiVersion).toBe('gateway.networking.k8s.io/v1');
    expect(route?.metadata.name).toBe('obs-ingest');
    expect(route?.spec).toEqual({
      parentRefs: [{ name: 'public', namespace: 'gateways', sectionName: 'https' }],
      hostnames: ['events.test'],
      rules: [
        {
          matches: paths.map(({ path, pathType }) => ({
            path: { type: pathType === 'Exact' ? 'Exact' : 'PathPrefix', value: path },
          })),
          backendRefs: [{ name: 'obs-ingest', port: 8080 }],
        },
      ],
    });
  });

  it('refuses to render without a Gateway to attach to, saying which value is missing', () => {
    expect(renderError(setArgs({ ...REQUIRED_VALUES, 'ingest.httpRoute.enabled': true }))).toMatch(
      /ingest\.httpRoute\.parentRefs: name the Gateway the route attaches to/,
    );
  });
});

describe('kubeVersion', () => {
  it('admits the Kubernetes releases in support (1.35 and later) and refuses 1.34', () => {
    const chart = parse(readFileSync(join(CHART_DIR, 'Chart.yaml'), 'utf8')) as { kubeVersion: string };
    expect(chart.kubeVersion).toBe('>=1.35.0-0');
    const args = ['template', 'obs', CHART_DIR, ...setArgs(REQUIRED_VALUES)];
    expect(helm([...args, '--kube-version', 'v1.37.2']).status).toBe(0);
    expect(helm([...args, '--kube-version', 'v1.34.4']).stderr).toMatch(/kubeVersion|incompatible/i);
  });
});
