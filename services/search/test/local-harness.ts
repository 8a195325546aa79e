/**
 * The search service with the `local` login: the admin password written to a file of its own, as
 * the chart's Secret mounts it, and the service started with that file and a session secret.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { authenticatorFor } from '../src/auth/index.js';
import { readAuthConfig } from '../src/config.js';
import { type Harness, startHarness } from './harness.js';

export async function startLocalHarness(
  name: string,
  password: string,
  opts: Omit<Parameters<typeof startHarness>[1] & object, 'authenticate'> = {},
): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'search-local-'));
  writeFileSync(join(dir, 'password'), `${password}\n`);
  const auth = readAuthConfig({
    SEARCH_AUTH_MODE: 'local',
    SEARCH_SESSION_SECRET: `${name}-session-secret-0123456789abcdef`,
    SEARCH_LOCAL_ADMIN_PASSWORD_FILE: join(dir, 'password'),
  });
  return startHarness(name, { ...opts, authenticate: authenticatorFor(auth) });
}
