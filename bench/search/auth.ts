/**
 * CPU a request spends on knowing its reader: search's authenticators in front of a route that
 * does nothing else, in-process (Hono's `app.request`, no sockets), BENCH_AUTH_REQUESTS requests
 * (default 20,000) per round, five rounds alternating the kinds so drift on a noisy machine falls
 * on all. The kinds: no login (the peer every figure is read against), the sealed session cookie
 * of the `local` and `oidc` modes, and a bearer JWT of the devstack's OpenID provider (signature
 * checked with its cached key set). The logins are wired as the service wires them: each session is
 * checked against the sessions ended by a logout, kept in a PostgreSQL of the devstack's.
 *
 *   node --conditions=source --import tsx bench/search/auth.ts
 *
 * Writes its section of bench/results/latest.md.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createDatabase, startOidcIssuer, startPostgres, tempDataDir } from '@event-observatory/devstack';
import {
  type Authenticator,
  bearerSettingsFromEnv,
  createBearerTokens,
  storedAuthenticatorFor,
} from '@event-observatory/search';
import { randomDevSecret } from '@event-observatory/service-kit';
import { createReadPool, migrate } from '@event-observatory/store';
import { Hono } from 'hono';
import { benchNumber, benchRun } from '../lib/report.js';

const run = benchRun('search-auth');
const REQUESTS = benchNumber('AUTH_REQUESTS', 20_000);
const ROUNDS = 5;
const AUDIENCE = 'observatory-search';
const PASSWORD = randomDevSecret();

function appWith(authenticate?: Authenticator): Hono {
  const app = new Hono();
  if (authenticate) app.use(authenticate as never);
  app.get('/x', (c) => c.text('ok'));
  return app;
}

/** The `Set-Cookie` values of a response as one `Cookie` header. */
const cookies = (res: Response) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');

/** Logs in as the local admin through the login form; the session cookie. */
async function sessionCookie(app: Hono): Promise<string> {
  const form = await app.request('/login');
  const csrf = /name="csrf" value="([^"]+)"/.exec(await form.text())?.[1];
  if (!csrf) throw new Error('no form token on the login page');
  const res = await app.request('/login', {
    method: 'POST',
    headers: { cookie: cookies(form), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf, username: 'admin', password: PASSWORD }).toString(),
  });
  if (res.status !== 303) throw new Error(`login answered ${res.status}`);
  return cookies(res);
}

/** CPU µs a request of `headers` costs on `app` (one round); every answer must be 200. */
async function cpuPerRequest(app: Hono, headers: Record<string, string>): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < REQUESTS; i++) {
    const res = await app.request('/x', { headers });
    if (res.status !== 200) throw new Error(`answered ${res.status}`);
    await res.arrayBuffer();
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / REQUESTS;
}

const dir = tempDataDir('bench-search-auth-');
const postgres = await startPostgres({ dataDir: join(dir, 'pg') });
const databaseUrl = await createDatabase(postgres.url, 'bench_auth');
await migrate({ url: databaseUrl });
const pool = createReadPool({ url: databaseUrl });
const idp = await startOidcIssuer();
const bearer = createBearerTokens(
  bearerSettingsFromEnv({ SEARCH_OIDC_ISSUER: idp.issuer, SEARCH_OIDC_CLIENT_ID: AUDIENCE }),
);
await bearer.start();
const local = {
  mode: 'local',
  session: { secret: randomDevSecret(), maxAgeMs: 8 * 3_600_000 },
  adminPassword: PASSWORD,
} as const;
const sessionApp = appWith(storedAuthenticatorFor(local).withPool(pool));
const kinds: { name: string; app: Hono; headers: Record<string, string> }[] = [
  { name: 'no login (peer)', app: appWith(), headers: {} },
  { name: 'session cookie', app: sessionApp, headers: { cookie: await sessionCookie(sessionApp) } },
  {
    name: 'bearer JWT (RS256)',
    app: appWith(storedAuthenticatorFor(local, { bearer }).withPool(pool)),
    headers: { authorization: `Bearer ${await idp.token({ audience: AUDIENCE, scope: 'events:read' })}` },
  },
];

// A warm-up round, not counted: the JIT and the key set's first use.
for (const k of kinds) await cpuPerRequest(k.app, k.headers);
const figures = new Map<string, number[]>(kinds.map((k) => [k.name, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const k of kinds) figures.get(k.name)?.push(await cpuPerRequest(k.app, k.headers));
}
bearer.close();
await idp.close();
await pool.end();
await postgres.stop();
rmSync(dir, { recursive: true, force: true });

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const peer = median(figures.get('no login (peer)') as number[]);
const rows = kinds.map(({ name }) => {
  const m = median(figures.get(name) as number[]);
  return `| ${name} | ${m.toFixed(1)} | ${(m - peer).toFixed(1)} | ${(m / peer).toFixed(2)}x |`;
});

run.write(`# search: CPU of checking the reader (bench/search/auth.ts)

CPU per request (user + system, median of ${ROUNDS} rounds of ${REQUESTS.toLocaleString('en')} in-process
requests to a route that only answers) with each way search knows its reader, wired as the service
wires them (a session is also checked against the sessions ended by a logout, which each replica
reads from PostgreSQL at most every 5 s); the check's own cost is the difference from the peer
without login, measured in the same rounds.

| reader | µs a request | µs for the check | x the peer |
| --- | --- | --- | --- |
${rows.join('\n')}
`);
