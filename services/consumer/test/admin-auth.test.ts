/**
 * The admin API apart from ingest: its own verifier (here an OIDC issuer and the audience
 * `observatory-admin`), so an ingest token never opens it, and one audit line per admin command.
 */
import { type OidcIssuer, startOidcIssuer } from '@event-observatory/devstack';
import { authConfigFromEnv, type Logger } from '@event-observatory/service-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_SCOPE } from '../src/config.js';
import { type Harness, startHarness } from './harness.js';

const lines: Record<string, unknown>[] = [];
const audit: Logger = {
  debug: () => {},
  info: (obj, msg) => lines.push({ ...obj, msg }),
  warn: () => {},
  error: () => {},
};
let idp: OidcIssuer;
let h: Harness;

beforeAll(async () => {
  idp = await startOidcIssuer();
  const auth = authConfigFromEnv(
    { ADMIN_AUTH_OIDC_ISSUER: idp.issuer, ADMIN_AUTH_AUDIENCE: 'observatory-admin' },
    { defaultScope: ADMIN_SCOPE, prefix: 'ADMIN_AUTH' },
  );
  h = await startHarness('admin-auth', { auth, audit, env: { CONSUMER_AUTO_START: 'false' } });
});
afterAll(async () => {
  await h?.close();
  await idp?.close();
});

const auditLines = () => lines.filter((l) => l.audit === 'admin');

describe('the admin API with its own issuer and audience', () => {
  it('accepts a token of the issuer for observatory-admin with events:admin', async () => {
    const token = await idp.token({ client: 'operator', audience: 'observatory-admin', scope: ADMIN_SCOPE });
    expect((await h.request('/admin/consumer', { token })).status).toBe(200);
  });

  it('refuses a token of the same issuer for the ingest audience with 401, though it carries events:admin', async () => {
    const token = await idp.token({ audience: 'observatory-ingest', scope: `events:write ${ADMIN_SCOPE}` });
    const res = await h.request('/admin/consumer', { token });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { status: string } }).error.status).toBe('UNAUTHENTICATED');
  });

  it('answers 403 to an admin-audience token without events:admin', async () => {
    const token = await idp.token({ audience: 'observatory-admin', scope: 'events:write' });
    expect((await h.request('/admin/consumer', { token })).status).toBe(403);
  });

  it('readiness reports the admin key set', async () => {
    const body = (await (await h.request('/health/ready', { token: null })).json()) as Record<string, string>;
    expect(body.keySet).toBe('fresh');
  });
});

describe('the audit trail', () => {
  it('writes one line per admin command with subject, issuer, command, arguments and status', async () => {
    const token = await idp.token({ client: 'operator', audience: 'observatory-admin', scope: ADMIN_SCOPE });
    const before = auditLines().length;
    const res = await h.request('/admin/dlq:replay?limit=5&dryRun=true', { method: 'POST', token });
    expect(res.status).toBe(200);
    expect(auditLines().slice(before)).toEqual([
      {
        audit: 'admin',
        subject: 'operator',
        issuer: idp.issuer,
        command: 'POST dlq:replay',
        arguments: { limit: '5', dryRun: 'true' },
        status: 200,
        msg: 'admin command',
      },
    ]);
  });

  it('writes no line for a refused request, and the line of a refused argument says 400', async () => {
    const token = await idp.token({ client: 'operator', audience: 'observatory-admin', scope: ADMIN_SCOPE });
    const before = auditLines().length;
    await h.request('/admin/consumer:stop', { method: 'POST', token: null });
    await h.request('/admin/dlq/records?limit=nope', { token });
    expect(auditLines().slice(before)).toMatchObject([
      { subject: 'operator', command: 'GET dlq/records', arguments: { limit: 'nope' }, status: 400 },
    ]);
  });
});
