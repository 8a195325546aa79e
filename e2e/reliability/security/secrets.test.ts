/**
 * Secrets stay out of logs and metrics (security). Every service runs as a real process
 * at debug level with known secret values (AUTH_SECRET, ADMIN_AUTH_SECRET, APPLICATION_SECRET, the database password
 * as DATABASE_PASSWORD and STORE_PASSWORD), is sent accepted and refused tokens and failing
 * requests, is scraped, and is stopped; a maintenance job runs, and a search service is pointed at
 * a store that refuses the password. No byte of any secret, nor any token, may appear in what they
 * wrote or in their `/metrics`.
 */
import { randomUUID } from 'node:crypto';
import { signDevToken } from '@event-observatory/service-kit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPipelineTopics, createSuiteDatabase } from '../../support/services.js';
import { runJob, type ServiceProcess, spawnService } from './processes.js';
import { hmacToken, nowSeconds } from './tokens.js';

const suffix = randomUUID().slice(0, 8);
/** Distinctive values, so a match can only be a leak. */
const AUTH_SECRET = `auth-secret-${randomUUID()}`;
const ADMIN_AUTH_SECRET = `admin-auth-secret-${randomUUID()}`;
const APPLICATION_SECRET = `application-secret-${randomUUID()}`;
const STORE_PASSWORD = `store-password-${randomUUID()}`;
const ROLE = `security_${suffix}`;

const processes: ServiceProcess[] = [];
const captured: { name: string; text: string }[] = [];
const tokens: string[] = [];
/** Statuses of the requests that exercise the paths a leak would take, by a short name. */
const answers: Record<string, number[]> = {};
const answered = (name: string, res: Response) => {
  answers[name] = [...(answers[name] ?? []), res.status];
};

/** The database URL without credentials other than the role: the password comes from the env. */
function roleUrl(databaseUrl: string, port?: number): string {
  const url = new URL(databaseUrl);
  url.username = ROLE;
  url.password = '';
  if (port !== undefined) url.port = String(port);
  return url.toString();
}

async function scrape(p: ServiceProcess, name: string): Promise<void> {
  captured.push({ name: `${name} /metrics`, text: await (await fetch(`${p.metricsUrl}/metrics`)).text() });
}

beforeAll(async () => {
  const stack = inject('stack');
  const topic = `security-secrets-${suffix}`;
  await createPipelineTopics(topic);
  const databaseUrl = await createSuiteDatabase(`security_secrets_${suffix}`);
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  // sql-witness: creates and drops the role and database whose password must stay secret.
  await admin.query(`CREATE ROLE ${ROLE} LOGIN PASSWORD '${STORE_PASSWORD}'`);
  await admin.query(`ALTER DATABASE ${new URL(databaseUrl).pathname.slice(1)} OWNER TO ${ROLE}`);
  await admin.end();
  const store = {
    DATABASE_URL: roleUrl(databaseUrl),
    DATABASE_PASSWORD: STORE_PASSWORD,
    STORE_PASSWORD,
    LOG_LEVEL: 'debug',
  };
  const broker = { BROKER_BOOTSTRAP_SERVERS: stack.bootstrapServers, BROKER_TOPIC: topic };

  const consumer = await spawnService('consumer', {
    ...store,
    ...broker,
    ADMIN_AUTH_SECRET,
    BROKER_GROUP_ID: `security-secrets-${suffix}`,
    CONSUMER_BATCH_WINDOW: '50ms',
  });
  const ingest = await spawnService('ingest', { ...broker, AUTH_SECRET, LOG_LEVEL: 'debug' });
  // Login off: this suite reads pages without a session (login.test.ts covers the login).
  const search = await spawnService('search', { ...store, APPLICATION_SECRET, SEARCH_AUTH_MODE: 'off' });
  // A store that refuses the login: the errors it causes are logged, the password must not be.
  const refused = await spawnService('search', {
    ...store,
    DATABASE_PASSWORD: `${STORE_PASSWORD}-wrong`,
    STORE_PASSWORD: `${STORE_PASSWORD}-wrong`,
    APPLICATION_SECRET,
    SEARCH_AUTH_MODE: 'off',
  });
  processes.push(consumer, ingest, search, refused);

  const write = await signDevToken({ secret: AUTH_SECRET, scopes: ['events:write'] });
  const adminToken = await signDevToken({ secret: ADMIN_AUTH_SECRET, scopes: ['events:admin'] });
  const expired = hmacToken({ sub: 's', exp: nowSeconds() - 3600, scope: 'events:write' }, AUTH_SECRET);
  const forged = hmacToken(
    { sub: 's', exp: nowSeconds() + 600, scope: 'events:write' },
    'not-the-secret-0123456789abcdef01',
  );
  tokens.push(write, adminToken, expired, forged);

  for (const token of [write, expired, forged]) {
    const created = await fetch(`${ingest.url}/v1/events`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'ce-specversion': '1.0',
        'ce-id': randomUUID(),
        'ce-source': '/security/secrets',
        'ce-type': 'security.secrets',
        'ce-time': new Date().toISOString(),
        'content-type': 'application/json',
      },
      body: JSON.stringify({ note: 'secrets suite' }),
    });
    answered('ingest create', created);
    // A refused event (no time) and a broken batch, each with the token.
    await fetch(`${ingest.url}/v1/events`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'ce-specversion': '1.0',
        'ce-id': 'x',
        'ce-source': '/s',
        'ce-type': 't',
      },
    });
    await fetch(`${ingest.url}/v1/events:batchCreate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/cloudevents-batch+json' },
      body: '[{"broken"',
    });
  }
  for (const token of [adminToken, write, forged]) {
    answered(
      'consumer admin',
      await fetch(`${consumer.adminUrl}/admin/consumer`, { headers: { authorization: `Bearer ${token}` } }),
    );
    await fetch(`${consumer.adminUrl}/admin/dlq`, { headers: { authorization: `Bearer ${token}` } });
  }
  const page = await (await fetch(`${search.url}/events?limit=1`)).text();
  const cursor = /cursor=([^"&]+)/.exec(page)?.[1];
  if (cursor) await fetch(`${search.url}/events?limit=1&cursor=${cursor}x`);
  await fetch(`${search.url}/events?q=x&payload=a%20%3D%201`);
  answered('search with a refused login', await fetch(`${refused.url}/events`));
  answered('search with a refused login', await fetch(`${refused.url}/health/ready`));
  for (const [p, name] of [
    [consumer, 'consumer'],
    [ingest, 'ingest'],
    [search, 'search'],
    [refused, 'search (refused login)'],
  ] as const) {
    await scrape(p, name);
  }
  for (const job of ['partition-maintenance', 'rollup-refresh']) {
    const { output } = await runJob(job, store);
    captured.push({ name: `jobs ${job} output`, text: output });
  }
  const names = ['consumer', 'ingest', 'search', 'search (refused login)'];
  for (const [i, p] of processes.entries()) {
    await p.stop();
    captured.push({ name: `${names[i]} output`, text: p.output() });
  }
}, 600_000);

afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop()));
  const admin = new pg.Client({ connectionString: inject('stack').databaseUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS security_secrets_${suffix} WITH (FORCE)`).catch(() => {});
  await admin.query(`DROP ROLE IF EXISTS ${ROLE}`).catch(() => {});
  await admin.end();
});

describe('logs and metrics of every service', () => {
  it('were captured after accepted, refused and failing requests to every service', () => {
    expect(captured.map((c) => c.name)).toHaveLength(10);
    for (const c of captured) expect(c.text.length, c.name).toBeGreaterThan(0);
    expect(answers).toEqual({
      'ingest create': [200, 401, 401],
      // The ingest token does not verify at the admin API: its own key (ADMIN_AUTH_SECRET).
      'consumer admin': [200, 401, 401],
      'search with a refused login': [503, 503],
    });
  });

  it.each([
    ['AUTH_SECRET', AUTH_SECRET],
    ['ADMIN_AUTH_SECRET', ADMIN_AUTH_SECRET],
    ['APPLICATION_SECRET', APPLICATION_SECRET],
    ['STORE_PASSWORD / DATABASE_PASSWORD', STORE_PASSWORD],
  ])('never contain %s', (_name, secret) => {
    for (const c of captured) {
      expect(c.text.includes(secret), c.name).toBe(false);
      expect(c.text.includes(encodeURIComponent(secret)), c.name).toBe(false);
    }
  });

  it('never contain a bearer token, nor its signature', () => {
    for (const token of tokens) {
      const signature = token.split('.')[2]!;
      for (const c of captured) {
        expect(c.text.includes(token), c.name).toBe(false);
        expect(c.text.includes(signature), c.name).toBe(false);
      }
    }
  });
});
