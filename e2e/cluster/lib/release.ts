/**
 * What a suite needs to `helm install` the chart against the suite's PostgreSQL: a database of
 * its own with one Secret holding every key the chart's `secrets.*` name, a producer token, the
 * images of this run as values, small requests for a shared 2-core node, and the headers of a
 * binary-mode CloudEvent POST.
 */
import { createDatabase } from '@event-observatory/devstack';
import { randomDevSecret, signDevToken } from '@event-observatory/service-kit';
import type { TestNamespace } from './kube.js';

export interface ReleaseSecrets {
  /** The database URL with its password (for the suite's own pool). */
  databaseUrl: string;
  /** Values naming the database (without password) and the Secret for every `secrets.*`. */
  values: Record<string, string>;
  /** A bearer token with `events:write` for ingest. */
  token: string;
}

export async function releaseSecrets(
  ns: TestNamespace,
  serverUrl: string,
  database: string,
  secretName: string,
): Promise<ReleaseSecrets> {
  const databaseUrl = await createDatabase(serverUrl, database);
  const url = new URL(databaseUrl);
  const password = decodeURIComponent(url.password);
  url.password = '';
  const authSecret = randomDevSecret();
  await ns.apply({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: secretName },
    stringData: {
      STORE_PASSWORD: password,
      AUTH_SECRET: authSecret,
      ADMIN_AUTH_SECRET: randomDevSecret(),
      APPLICATION_SECRET: randomDevSecret(),
    },
  });
  const token = await signDevToken({
    secret: authSecret,
    scopes: ['events:write'],
    audience: 'observatory-ingest',
    ttl: '1h',
  });
  return {
    databaseUrl,
    token,
    values: {
      'database.url': url.toString(),
      'database.user': decodeURIComponent(url.username),
      ...Object.fromEntries(
        ['store', 'auth', 'admin', 'application'].map((s) => [`secrets.${s}.name`, secretName]),
      ),
    },
  };
}

/** `image.*` values for the images of this run (`<registry>/<path>/ingest:<tag>` and its siblings). */
export function imageValues(ingestImage: string, components: string[]): Record<string, string> {
  const [prefix, tag] = ingestImage.replace(/\/ingest:/, ' ').split(' ') as [string, string];
  const [registry, ...path] = prefix.split('/');
  return {
    'image.registry': registry as string,
    'image.tag': tag,
    ...Object.fromEntries(components.map((c) => [`${c}.image.repository`, `${path.join('/')}/${c}`])),
  };
}

/** `--set-json` arguments giving each component small requests (a 2-core node shared by suites). */
export function smallResources(components: string[]): string[] {
  const small = { requests: { cpu: '10m', memory: '64Mi' }, limits: { memory: '384Mi' } };
  return components.flatMap((c) => ['--set-json', `${c}.resources=${JSON.stringify(small)}`]);
}

/** Headers of a binary-mode CloudEvent POST to ingest. */
export function cloudEventHeaders(
  token: string,
  event: { id: string; source: string; type: string; subject?: string },
): Record<string, string> {
  return {
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    'ce-specversion': '1.0',
    'ce-id': event.id,
    'ce-source': event.source,
    'ce-type': event.type,
    ...(event.subject === undefined ? {} : { 'ce-subject': event.subject }),
    'ce-time': new Date().toISOString(),
  };
}
