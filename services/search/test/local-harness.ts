/**
 * The search service with the `local` login: the admin password written to a file of its own, as
 * the chart's Secret mounts it, and the service started with that file and a session secret.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMetrics } from '@event-observatory/service-kit/metrics';
import { type RunningServer, serveApp } from '@event-observatory/service-kit/server';
import { storedAuthenticatorFor } from '../src/auth/index.js';
import { type AuthConfig, readAuthConfig } from '../src/config.js';
import { createSearchService, DEFAULT_ALLOWED_HOSTS } from '../src/index.js';
import { type Harness, SECRET, startHarness } from './harness.js';

function localAuth(name: string, password: string): AuthConfig {
  const dir = mkdtempSync(join(tmpdir(), 'search-local-'));
  writeFileSync(join(dir, 'password'), `${password}\n`);
  return readAuthConfig({
    SEARCH_AUTH_MODE: 'local',
    SEARCH_SESSION_SECRET: `${name}-session-secret-0123456789abcdef`,
    SEARCH_LOCAL_ADMIN_PASSWORD_FILE: join(dir, 'password'),
  });
}

export async function startLocalHarness(
  name: string,
  password: string,
  opts: Omit<Parameters<typeof startHarness>[1] & object, 'authenticate'> = {},
): Promise<Harness> {
  return startHarness(name, { ...opts, authenticate: storedAuthenticatorFor(localAuth(name, password)) });
}

/**
 * A second search service beside `startLocalHarness(name, password)`'s, on its database and with its
 * session secret: another replica of the same deployment.
 */
export async function startLocalReplica(h: Harness, name: string, password: string): Promise<RunningServer> {
  const service = createSearchService({
    config: { allowedHosts: DEFAULT_ALLOWED_HOSTS.split(','), secret: SECRET },
    databaseUrl: h.databaseUrl,
    registry: createMetrics({ service: 'search', version: 'test' }).registry,
    authenticate: storedAuthenticatorFor(localAuth(name, password)),
  });
  const server = await serveApp(service.app, { host: '127.0.0.1', port: 0, drainMs: 1_000 });
  return {
    ...server,
    async close() {
      await server.close();
      await service.close();
    },
  };
}
