/**
 * Test harness: the search service in-process, listening on an ephemeral port, over a fresh
 * database of the devstack PostgreSQL with the migrations applied and, optionally, seeded rows.
 */
import { randomUUID } from 'node:crypto';
import {
  createDatabase,
  createDatabaseRoles,
  rollupFromEvents,
  seedEvents,
} from '@event-observatory/devstack';
import type { HealthCheck } from '@event-observatory/service-kit/health';
import type { Logger } from '@event-observatory/service-kit/logger';
import { createMetrics } from '@event-observatory/service-kit/metrics';
import { type RunningServer, serveApp } from '@event-observatory/service-kit/server';
import { migrate } from '@event-observatory/store';
import pg from 'pg';
import type { Registry } from 'prom-client';
import { inject } from 'vitest';
import type { ExportLimits } from '../src/export.js';
import { createSearchService, DEFAULT_ALLOWED_HOSTS, type SearchService } from '../src/index.js';
import type { TailLimits } from '../src/tail.js';
import type { Authenticator, StoredAuthenticator } from '../src/viewer.js';
import type { VisibilityPolicy } from '../src/visibility.js';

export const SECRET = 'search-test-secret-0123456789abcdef';
/** Rows of the standard seed: more than the 10,000 total cap. */
export const SEEDED = 12_000;
export const SEED_SPAN_MS = 7 * 86_400_000;

export interface Harness {
  url: string;
  /** The database as the superuser. */
  databaseUrl: string;
  service: SearchService;
  registry: Registry;
  server: RunningServer;
  /** A writable pool on the same database (the service's own is read-only). */
  db: pg.Pool;
  /** The end of the seeded range: row n is at `seedEnd - n * step`. */
  seedEnd: Date;
  get(path: string, headers?: Record<string, string>, signal?: AbortSignal): Promise<Response>;
  metric(line: RegExp): Promise<number | undefined>;
  close(): Promise<void>;
}

export async function startHarness(
  name: string,
  opts: {
    seed?: number;
    tailPollMs?: number;
    tailLimits?: TailLimits;
    exportLimits?: ExportLimits;
    serving?: () => boolean;
    pageTimeoutMs?: number;
    logger?: Logger;
    /**
     * The URL search reads from, given the database's (a replica's); default the database's. The
     * database's own is then search's primary (its saved searches and ended sessions), as the chart
     * sets it beside `database.readUrl`.
     */
    readUrl?: (databaseUrl: string) => string;
    authenticate?: Authenticator | StoredAuthenticator;
    visibility?: VisibilityPolicy;
    /** Readiness checks beside the database's (the bearer tokens' key sets). */
    checks?: Record<string, HealthCheck>;
    /**
     * Search logs in as the reader role, as in a deployment, under row-level security (the
     * superuser, the default, bypasses it); `readUrl` then gets the reader's URL.
     */
    asReader?: boolean;
  } = {},
): Promise<Harness> {
  const stack = inject('stack');
  const database = `s_${name}_${randomUUID().slice(0, 8)}`;
  const databaseUrl = await createDatabase(stack.databaseUrl, database);
  let searchUrl = databaseUrl;
  if (opts.asReader) {
    const roles = await createDatabaseRoles(stack.databaseUrl, database);
    await migrate({ url: roles.owner.url, writerRole: roles.writer.name, readerRole: roles.reader.name });
    searchUrl = roles.reader.url;
  } else {
    await migrate({ url: databaseUrl });
  }
  const db = new pg.Pool({ connectionString: databaseUrl, max: 3 });
  db.on('error', () => {});
  const seedEnd = new Date(Math.floor(Date.now() / 1000) * 1000);
  const count = opts.seed ?? 0;
  if (count > 0) {
    await seedEvents(db, { count, spanMs: SEED_SPAN_MS, end: seedEnd });
    await rollupFromEvents(db);
  }
  const { registry } = createMetrics({ service: 'search', version: 'test' });
  const service = createSearchService({
    config: {
      allowedHosts: DEFAULT_ALLOWED_HOSTS.split(','),
      secret: SECRET,
      ...(opts.pageTimeoutMs !== undefined ? { pageTimeoutMs: opts.pageTimeoutMs } : {}),
    },
    databaseUrl: opts.readUrl ? opts.readUrl(searchUrl) : searchUrl,
    ...(opts.readUrl ? { primaryUrl: searchUrl } : {}),
    registry,
    ...(opts.tailPollMs !== undefined ? { tailPollMs: opts.tailPollMs } : {}),
    ...(opts.tailLimits ? { tailLimits: opts.tailLimits } : {}),
    ...(opts.exportLimits ? { exportLimits: opts.exportLimits } : {}),
    ...(opts.serving ? { serving: opts.serving } : {}),
    ...(opts.logger ? { logger: opts.logger } : {}),
    ...(opts.authenticate ? { authenticate: opts.authenticate } : {}),
    ...(opts.visibility ? { visibility: opts.visibility } : {}),
    ...(opts.checks ? { checks: opts.checks } : {}),
  });
  const server = await serveApp(service.app, { host: '127.0.0.1', port: 0, drainMs: 1_000 });
  const get = (path: string, headers: Record<string, string> = {}, signal?: AbortSignal) =>
    fetch(`${server.url}${path}`, { headers, ...(signal ? { signal } : {}) });
  return {
    url: server.url,
    databaseUrl,
    service,
    registry,
    server,
    db,
    seedEnd,
    get,
    async metric(line) {
      const text = await registry.metrics();
      const found = text.split('\n').find((l) => line.test(l));
      return found === undefined ? undefined : Number(found.slice(found.lastIndexOf(' ') + 1));
    },
    async close() {
      service.endTails();
      await server.close();
      await service.close();
      await db.end();
    },
  };
}

// sql-witness: counts the reader's running statements and locks the table in its own SQL, to see cancellations and failures from outside.
/** Statements of the search's read pool running or waiting in the database now. */
export async function readerStatements(h: Harness): Promise<number> {
  const { rows } = await h.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND application_name = 'observatory-read' AND state = 'active'`,
  );
  return rows[0]!.n;
}

/** Runs `work` while a transaction holds every read of the event table back. */
export async function withTableLocked<T>(h: Harness, work: () => Promise<T>): Promise<T> {
  const locker = await h.db.connect();
  try {
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE events.cloud_event IN ACCESS EXCLUSIVE MODE');
    return await work();
  } finally {
    await locker.query('ROLLBACK');
    locker.release();
  }
}
