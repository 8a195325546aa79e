/**
 * `helm test <release>`: a pod of the ingest image that mints a token with the release's static
 * key (token-cli.js), validates an event, publishes it, and finds it through search; kept when it
 * fails (its log says which step), deleted when it passes. Rendered only with a static HMAC key
 * (with a key set the chart cannot mint a token). Search is read with a service-account token of
 * the pod (projected, search's audience) when search accepts them; with a login and no such
 * tokens the chart cannot log in, so the test checks instead that search refuses to read for an
 * anonymous client.
 */

import * as k8s from 'cdk8s-plus-34/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { keyEnv, usesKeySet } from '../auth.js';
import { onlyIf, releaseName, releaseNameExpr, scalar, value } from '../helm.js';
import { HTTP_PORT, image, metadata, podBlocks, podDefaults, tmpMount } from './common.js';

/** The pod's service-account token for search (audience `search.auth.bearer.serviceAccountAudience`). */
const TOKEN_DIR = '/var/run/observatory/search-token';

/** Node's ES module script of the test: each step prints one line, a failure says which. */
const SCRIPT = `import { readFileSync } from 'node:fs';
const id = 'helm-test-' + Date.now();
const fail = (m) => { console.error('helm test failed: ' + m); process.exit(1); };
const headers = {
  authorization: 'Bearer ' + process.env.TOKEN, 'content-type': 'application/json',
  'ce-specversion': '1.0', 'ce-id': id, 'ce-source': '/helm-test', 'ce-type': 'dev.observatory.helm.test',
  'ce-subject': id, 'ce-time': new Date().toISOString(),
};
const post = (path) => fetch(process.env.INGEST_URL + path, { method: 'POST', headers, body: JSON.stringify({ id }) });
let res = await post('/v1/events:validate');
const verdict = await res.json().catch(() => ({}));
if (res.status !== 200 || verdict.valid !== true) fail('validate: ' + res.status + ' ' + JSON.stringify(verdict));
console.log('validated ' + id);
res = await post('/v1/events');
if (res.status !== 200) fail('publish: ' + res.status + ' ' + (await res.text()));
console.log('published ' + id);
const mode = process.env.SEARCH_AUTH_MODE;
const tokens = process.env.SEARCH_SERVICE_ACCOUNT_OIDC_ISSUER !== '';
if (mode !== 'off' && !tokens) {
  res = await fetch(process.env.SEARCH_URL + '/events', { redirect: 'manual' }).catch(() => undefined);
  if (!res || ![401, 302, 303, 307].includes(res.status)) fail('search answered an anonymous read with ' + (res && res.status) + ' though its login is ' + mode);
  console.log('search refuses anonymous reads (login ' + mode + '); with search.auth.bearer.serviceAccounts=true this test finds the event');
  process.exit(0);
}
const searchHeaders = tokens ? { authorization: 'Bearer ' + readFileSync('${TOKEN_DIR}/token', 'utf8').trim() } : {};
const deadline = Date.now() + 120000;
for (;;) {
  res = await fetch(process.env.SEARCH_URL + '/events?subject=' + encodeURIComponent(id), { headers: searchHeaders }).catch(() => undefined);
  if (res && res.status === 200 && (await res.text()).includes('href="/events/')) break;
  if (Date.now() > deadline) fail('not found through search within 120 s (last status ' + (res && res.status) + ')');
  await new Promise((r) => setTimeout(r, 2000));
}
console.log('found through search ' + id);
`;

/** The component's Service by its rendered name (nameOverride, fullnameOverride). */
const url = (component: string) =>
  scalar(`{{ printf "http://%s:${HTTP_PORT}" ${releaseNameExpr(component)} | toJson }}`);

export class HelmTest extends Construct {
  constructor(scope: Construct) {
    super(scope, 'helm-test');
    const pod = new k8s.KubePod(this, 'test-pod', {
      metadata: metadata('test', 'test', {
        'helm.sh/hook': 'test',
        'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
      }),
      spec: {
        ...podDefaults('ingest'),
        automountServiceAccountToken: false,
        restartPolicy: 'Never',
        containers: [
          {
            name: 'test',
            ...image('ingest'),
            command: [
              'sh',
              '-c',
              'TOKEN=$(node services/ingest/dist/token-cli.js --subject helm-test --ttl 10m) && export TOKEN && exec node --input-type=module -e "$SCRIPT"',
            ],
            envFrom: [{ configMapRef: { name: releaseName('ingest') } }],
            env: [
              keyEnv('AUTH', 'auth'),
              { name: 'SEARCH_AUTH_MODE', value: value('search.auth.mode') },
              // Set exactly when search verifies service-account tokens (search-auth.ts).
              {
                name: 'SEARCH_SERVICE_ACCOUNT_OIDC_ISSUER',
                valueFrom: {
                  configMapKeyRef: { name: releaseName('search'), key: 'SEARCH_SERVICE_ACCOUNT_OIDC_ISSUER' },
                },
              },
              { name: 'INGEST_URL', value: url('ingest') },
              { name: 'SEARCH_URL', value: url('search') },
              { name: 'SCRIPT', value: SCRIPT },
            ],
            volumeMounts: [tmpMount, { name: 'search-token', mountPath: TOKEN_DIR, readOnly: true }],
          },
        ],
        volumes: [
          ...(podDefaults('ingest').volumes ?? []),
          {
            name: 'search-token',
            projected: {
              sources: [
                {
                  serviceAccountToken: {
                    path: 'token',
                    audience: value('search.auth.bearer.serviceAccountAudience'),
                    expirationSeconds: 600,
                  },
                },
              ],
            },
          },
        ],
      },
    });
    // Its labels carry the release's instance, which the search NetworkPolicy admits. Scheduling,
    // pull secrets and security contexts as every pod of the chart; ingest's resources.
    podBlocks(pod, '/spec', 'ingest.resources');
    onlyIf(pod, `not ${usesKeySet('auth')}`);
  }
}
