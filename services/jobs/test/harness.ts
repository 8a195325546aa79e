/**
 * Test harness: a fresh migrated database, the jobs built as `main.ts` builds them but with a clock
 * the test sets, captured log lines, and the maintenance meters on a registry of their own.
 */
import { randomUUID } from 'node:crypto';
import { createDatabase, createDatabaseRoles } from '@event-observatory/devstack';
import { createLogger } from '@event-observatory/service-kit';
import { createWritePool, migrate, registerMaintenanceMeters } from '@event-observatory/store';
import type pg from 'pg';
import { Registry } from 'prom-client';
import { inject } from 'vitest';
import { createJobsService, type JobsService, readJobsConfig } from '../src/index.js';

export interface LogLine {
  level: string;
  msg: string;
  [field: string]: unknown;
}

export interface Harness {
  /** What the jobs log in with: the superuser's URL, or the writer's with `roles`. */
  databaseUrl: string;
  db: pg.Pool;
  logs: LogLine[];
  /** The jobs at the clock `now` (settable), configured from `env` like the program. */
  jobs(env?: Record<string, string>): JobsService;
  now: Date;
  /** A scrape of the maintenance meters as a service exporting them sees it at `now`. */
  scrape(registry?: Registry): Promise<string>;
  newRegistry(): Registry;
  close(): Promise<void>;
}

/**
 * With `roles`, the database gets the store's three roles: the owner migrates and grants, the jobs
 * log in as the writer (as in a cluster); `db` stays the superuser's.
 */
export async function startHarness(name: string, opts: { roles?: boolean } = {}): Promise<Harness> {
  const { databaseUrl: adminUrl } = inject('stack');
  const database = `jobs_${name}_${randomUUID().slice(0, 8)}`.replace(/[^a-z0-9_]/g, '_');
  const superuserUrl = await createDatabase(adminUrl, database);
  let databaseUrl = superuserUrl;
  if (opts.roles) {
    const roles = await createDatabaseRoles(adminUrl, database);
    await migrate({ url: roles.owner.url, writerRole: roles.writer.name, readerRole: roles.reader.name });
    databaseUrl = roles.writer.url;
  } else {
    await migrate({ url: databaseUrl });
  }
  const db = createWritePool({ url: superuserUrl });
  const logs: LogLine[] = [];
  const logger = createLogger({
    service: 'jobs',
    level: 'info',
    destination: { write: (line: string) => logs.push(JSON.parse(line) as LogLine) },
  });
  const services: JobsService[] = [];
  const h: Harness = {
    databaseUrl,
    db,
    logs,
    now: new Date(),
    jobs(env = {}) {
      const service = createJobsService({
        config: readJobsConfig(env),
        databaseUrl,
        logger,
        clock: () => h.now,
      });
      services.push(service);
      return service;
    },
    newRegistry() {
      const registry = new Registry();
      registerMaintenanceMeters(registry, db, { clock: () => h.now.getTime() });
      return registry;
    },
    async scrape(registry) {
      return (registry ?? defaultRegistry).metrics();
    },
    async close() {
      await Promise.all(services.map((s) => s.close()));
      await db.end();
    },
  };
  const defaultRegistry = h.newRegistry();
  return h;
}

/** The value of one series in a scrape (`name{labels}` as written), undefined when absent. */
export function sample(text: string, series: string): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return undefined;
}

/** Inserts events through the parent table, as the consumer does. */
export async function insertEvents(
  db: pg.Pool | pg.ClientBase,
  rows: { at: string | Date; id: string; type?: string; source?: string; severity?: string }[],
): Promise<void> {
  await db.query(
    // sql-witness: plants rows, lists partitions and holds locks in its own SQL, independently of the jobs under test.
    `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, raw, extensions)
     SELECT t.at, t.src, t.id, t.typ, '{}'::jsonb, jsonb_strip_nulls(jsonb_build_object('severity', t.sev))
       FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::text[], $5::text[]) AS t(at, src, id, typ, sev)`,
    [
      rows.map((r) => r.at),
      rows.map((r) => r.source ?? 'urn:test:jobs'),
      rows.map((r) => r.id),
      rows.map((r) => r.type ?? 'com.example.reading'),
      rows.map((r) => r.severity ?? null),
    ],
  );
}

/** Attached partitions of events.cloud_event: name -> bound expression. */
export async function attachedPartitions(db: pg.Pool): Promise<Map<string, string>> {
  const { rows } = await db.query<{ name: string; bound: string }>(
    `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'events.cloud_event'::regclass`,
  );
  return new Map(rows.map((r) => [r.name, r.bound]));
}

/** Runs `fn` while another session's transaction holds what `sql` takes, then rolls that back. */
export async function whileHolding<T>(db: pg.Pool, sql: string, fn: () => Promise<T>): Promise<T> {
  const holder = await db.connect();
  try {
    await holder.query('BEGIN');
    await holder.query(sql);
    return await fn();
  } finally {
    await holder.query('ROLLBACK');
    holder.release();
  }
}

/** Polls `read` every 100 ms until it returns a value (10 s at most). */
export async function poll<T>(what: string, read: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 100; i++) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}
