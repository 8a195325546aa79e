/**
 * Search in proxy mode behind a real oauth2-proxy on the cluster (scripts/cluster/oauth2-proxy.sh
 * builds its image from the Go module proxy), as a platform team fronts an app without login: the
 * release with `search.auth.mode=proxy`, trusting only the oauth2-proxy pod's address
 * (`search.auth.proxy.trustedCidrs`) and admitting it (`search.allowFrom`); oauth2-proxy verifying
 * JWTs of an OpenID provider on this machine (`--skip-jwt-bearer-tokens`, the path scripts take)
 * and naming the user to search in `X-Auth-Request-*`. Search logs in as the reader role, so the
 * visibility rules (`search.visibility.rules`) are enforced by PostgreSQL: a team-a reader sees
 * team-a's events and not team-b's, through the page and the export. Our own cluster only:
 * oauth2-proxy's image is imported into its containerd.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  createDatabaseRoles,
  type OidcIssuer,
  oauth2ProxyAlphaConfig,
  startOidcIssuer,
} from '@event-observatory/devstack';
import { randomDevSecret } from '@event-observatory/service-kit';
import { beforeAll, describe, expect, it } from 'vitest';
import { binaryHeaders, ingestToken } from './lib/cloudevents.js';
import { ADDON_DEPLOY_TIMEOUT_MS, ADDON_SUITE_SETUP_MS, REPO_ROOT } from './lib/cluster.js';
import { baseInstall, setArgs } from './lib/helm.js';
import { createPipelineTopics } from './lib/kafka.js';
import type { TestNamespace } from './lib/kube.js';
import { ClusterSuite } from './lib/suite.js';

const run = promisify(execFile);
const suite = new ClusterSuite('search-proxy');
const RELEASE = 'sp';
/** The client id oauth2-proxy is registered as, and the audience of the users' tokens. */
const CLIENT = 'observatory-search';
const PROXY = 'oauth2-proxy';

let ns: TestNamespace;
let idp: OidcIssuer;
/** The oauth2-proxy Service, `http://<ClusterIP>:4180`. */
let proxyUrl: string;
const ids = { a: `proxy-a-${suite.run}`, b: `proxy-b-${suite.run}` };

/** The Deployment and Service of oauth2-proxy (non-root, read-only root), then its pod's address. */
async function deployProxy(image: string): Promise<string> {
  const labels = { 'app.kubernetes.io/name': PROXY };
  await ns.apply(
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: PROXY },
      data: {
        'alpha.yaml': oauth2ProxyAlphaConfig({
          bindAddress: '0.0.0.0:4180',
          // Search answers the hosts of its Service, not the proxy's address the test dials.
          upstreams: [
            {
              id: 'search',
              path: '/',
              uri: `http://${RELEASE}-search.${ns.name}.svc:8080/`,
              passHostHeader: false,
            },
          ],
          issuer: idp.issuer,
          clientId: CLIENT,
        }),
      },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: PROXY, labels },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            securityContext: {
              runAsNonRoot: true,
              runAsUser: 65532,
              seccompProfile: { type: 'RuntimeDefault' },
            },
            containers: [
              {
                name: PROXY,
                image,
                imagePullPolicy: 'Never',
                args: [
                  '--alpha-config=/etc/oauth2-proxy/alpha.yaml',
                  `--cookie-secret=${randomDevSecret().slice(0, 32)}`,
                  '--cookie-secure=false',
                  '--email-domain=*',
                  '--skip-jwt-bearer-tokens=true',
                ],
                ports: [{ name: 'http', containerPort: 4180 }],
                readinessProbe: { httpGet: { path: '/ping', port: 'http' }, periodSeconds: 2 },
                resources: { requests: { cpu: '10m', memory: '32Mi' }, limits: { memory: '128Mi' } },
                securityContext: {
                  allowPrivilegeEscalation: false,
                  readOnlyRootFilesystem: true,
                  capabilities: { drop: ['ALL'] },
                },
                volumeMounts: [{ name: 'config', mountPath: '/etc/oauth2-proxy' }],
              },
            ],
            volumes: [{ name: 'config', configMap: { name: PROXY } }],
          },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: PROXY },
      spec: { selector: labels, ports: [{ name: 'http', port: 4180, targetPort: 'http' }] },
    },
  );
  await ns.rolloutStatus(PROXY, 120_000);
  const [pod] = await ns.pods('app.kubernetes.io/name=oauth2-proxy');
  const ip = (pod as unknown as { status: { podIP?: string } } | undefined)?.status.podIP;
  if (!ip) throw new Error('the oauth2-proxy pod has no address');
  return ip;
}

/** A GET through oauth2-proxy as a person of `groups`. */
async function asUser(path: string, subject: string, groups: string[]): Promise<Response> {
  const token = await idp.userToken({
    subject,
    audience: CLIENT,
    claims: { email: `${subject}@example.test`, groups },
  });
  return fetch(`${proxyUrl}${path}`, {
    headers: { authorization: `Bearer ${token}` },
    redirect: 'manual',
    signal: AbortSignal.timeout(30_000),
  });
}

beforeAll(async () => {
  if (!suite.cluster.local) return;
  const t0 = Date.now();
  const env = { ...process.env, KUBECONFIG: suite.cluster.kubeconfig };
  const script = join(REPO_ROOT, 'scripts/cluster/oauth2-proxy.sh');
  const { stdout } = await run(script, ['deploy'], { env, timeout: ADDON_DEPLOY_TIMEOUT_MS });
  const image = stdout.trim().split('\n').at(-1) as string;
  // The provider on this machine's own address: the oauth2-proxy pod fetches its discovery and keys.
  idp = await startOidcIssuer({ host: suite.podStack.host });
  suite.onCleanup(() => idp.close());
  ns = await suite.namespace();
  await createPipelineTopics(suite.podStack.bootstrapServers, suite.topic);
  const databaseUrl = new URL(await suite.database());
  const roles = await createDatabaseRoles(suite.podStack.databaseUrl, databaseUrl.pathname.slice(1));
  const proxyIp = await deployProxy(image);

  const authSecret = randomDevSecret();
  const base = await baseInstall(suite.cluster.images, {
    ns,
    name: 'search-proxy-secrets',
    databaseUrl: roles.owner.url,
    authSecret,
    extra: { WRITER_PASSWORD: roles.writer.password, READER_PASSWORD: roles.reader.password },
  });
  await suite.helmInstall(RELEASE, ns, [
    ...setArgs({
      ...base.values,
      'kafka.bootstrapServers': suite.podStack.bootstrapServers,
      'kafka.groupId': suite.groupId,
      'pipeline.create': false,
      'pipeline.topic': suite.topic,
      'controller.enabled': false,
      'ingest.replicas': 1,
      'consumer.replicas': 1,
      'search.replicas': 1,
      'database.writer.user': roles.writer.name,
      'database.writer.passwordSecret.name': 'search-proxy-secrets',
      'database.reader.user': roles.reader.name,
      'database.reader.passwordSecret.name': 'search-proxy-secrets',
      'search.auth.mode': 'proxy',
    }),
    '--set-json',
    `search.auth.proxy.trustedCidrs=${JSON.stringify([`${proxyIp}/32`])}`,
    '--set-json',
    `search.allowFrom=${JSON.stringify([{ podSelector: { matchLabels: { 'app.kubernetes.io/name': PROXY } } }])}`,
    '--set-json',
    `search.visibility.rules=${JSON.stringify([
      { groups: ['team-a'], see: { sourcePrefixes: ['/team-a/'] } },
      { groups: ['team-b'], see: { sourcePrefixes: ['/team-b/'] } },
    ])}`,
    ...base.resourceArgs,
  ]);
  suite.log(`oauth2-proxy and the release installed in ${Math.round((Date.now() - t0) / 1000)} s`);

  proxyUrl = `http://${await suite.kube.serviceAddress(ns.name, PROXY, 4180)}`;
  const ingest = await suite.kube.serviceAddress(ns.name, `${RELEASE}-ingest`, 8080);
  const token = await ingestToken(authSecret);
  for (const [team, id] of Object.entries(ids)) {
    const res = await fetch(`http://${ingest}/v1/events`, {
      method: 'POST',
      headers: binaryHeaders(token, { id, source: `/team-${team}/plant`, type: 'com.example.proxy.test' }),
      body: JSON.stringify({ team }),
      signal: AbortSignal.timeout(30_000),
    });
    expect(res.status, await res.text()).toBe(200);
  }
}, ADDON_SUITE_SETUP_MS);

// Our own cluster only: oauth2-proxy's image is imported into its containerd.
describe.skipIf(!suite.cluster.local)('search behind oauth2-proxy on the cluster', () => {
  it("shows each team's reader its own events only, on the page and in the export", async () => {
    // The consumer stores them shortly after ingest acknowledged them.
    await expect
      .poll(
        async () => (await (await asUser('/events?range=1h', 'ada', ['team-a'])).text()).includes(ids.a),
        {
          timeout: 60_000,
          interval: 1_000,
        },
      )
      .toBe(true);
    const page = await asUser('/events?range=1h', 'ada', ['team-a']);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('ada@example.test');
    expect(html).not.toContain(ids.b);
    const exported = await (await asUser('/events.ndjson?range=1h', 'bo', ['team-b'])).text();
    expect(exported).toContain(ids.b);
    expect(exported).not.toContain(ids.a);
  });

  it('refuses a request without a token at oauth2-proxy, and identity headers of any other peer at search', async () => {
    const anonymous = await fetch(`${proxyUrl}/events`, {
      redirect: 'manual',
      signal: AbortSignal.timeout(30_000),
    });
    expect([302, 401, 403]).toContain(anonymous.status);
    // A client's own X-Auth-Request-* headers are replaced by oauth2-proxy's.
    const token = await idp.userToken({
      subject: 'ada',
      audience: CLIENT,
      claims: { email: 'ada@example.test', groups: ['team-a'] },
    });
    const forged = await fetch(`${proxyUrl}/events.ndjson?range=1h`, {
      headers: { authorization: `Bearer ${token}`, 'x-auth-request-groups': 'team-b' },
      signal: AbortSignal.timeout(30_000),
    });
    const body = await forged.text();
    expect(body).toContain(ids.a);
    expect(body).not.toContain(ids.b);
  });
});
