/**
 * The three login roles of the store (packages/store/DESIGN.md): an owner that runs the migrations
 * and owns the database, a writer (consumer, jobs) and a reader (search). The migration runner
 * grants the writer and the reader their privileges (`DATABASE_WRITER_ROLE`,
 * `DATABASE_READER_ROLE`); this module only makes the roles, as a DBA or the chart's database would.
 *
 * @example
 * const url = await createDatabase(stack.databaseUrl, 'events_roles');
 * const roles = await createDatabaseRoles(stack.databaseUrl, 'events_roles');
 * await migrate({ url: roles.owner.url, writerRole: roles.writer.name, readerRole: roles.reader.name });
 */
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { adminClient } from './postgres.js';

export interface DatabaseRole {
  name: string;
  password: string;
  /** The database's URL logged in as this role. */
  url: string;
}

export interface DatabaseRoles {
  owner: DatabaseRole;
  writer: DatabaseRole;
  reader: DatabaseRole;
}

/**
 * Creates (or resets the passwords of) the login roles `<database>_owner`, `_writer` and
 * `_reader`, with new random passwords, and makes the owner own `database` and, when it exists
 * already (a database migrated as the superuser before), its `events` schema and every object in
 * it; marks the search's operators leakproof there (as the chart's bundled server does).
 * `adminUrl` is a superuser's URL of any database of the server.
 */
export async function createDatabaseRoles(adminUrl: string, database: string): Promise<DatabaseRoles> {
  const make = (suffix: string): DatabaseRole => {
    const name = `${database}_${suffix}`;
    const password = randomBytes(18).toString('base64url');
    const url = new URL(adminUrl);
    url.username = encodeURIComponent(name);
    url.password = encodeURIComponent(password);
    url.pathname = `/${encodeURIComponent(database)}`;
    return { name, password, url: url.toString() };
  };
  const roles: DatabaseRoles = { owner: make('owner'), writer: make('writer'), reader: make('reader') };
  const admin = await connect(adminUrl);
  try {
    for (const role of Object.values(roles)) {
      const id = admin.escapeIdentifier(role.name);
      const exists = await admin.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role.name]);
      // A password in DDL cannot be a bind parameter; escapeLiteral quotes it.
      const pw = admin.escapeLiteral(role.password);
      await admin.query(
        exists.rowCount ? `ALTER ROLE ${id} LOGIN PASSWORD ${pw}` : `CREATE ROLE ${id} LOGIN PASSWORD ${pw}`,
      );
    }
    await admin.query(
      `ALTER DATABASE ${admin.escapeIdentifier(database)} OWNER TO ${admin.escapeIdentifier(roles.owner.name)}`,
    );
  } finally {
    await admin.end();
  }
  await adoptEventsSchema(adminUrl, database, roles.owner.name);
  await markSearchOperatorsLeakproof(adminUrl, database);
  return roles;
}

/**
 * As the chart's bundled PostgreSQL does (packages/store DESIGN.md, "Row visibility"): the
 * functions of the search's text, payload and tag operators marked leakproof in `database`, so the
 * reader's filters keep their GIN indexes under row-level security. A superuser's act.
 */
async function markSearchOperatorsLeakproof(adminUrl: string, database: string): Promise<void> {
  const url = new URL(adminUrl);
  url.pathname = `/${encodeURIComponent(database)}`;
  const db = await connect(url.toString());
  try {
    for (const f of [
      'pg_catalog.ts_match_vq(tsvector, tsquery)',
      'pg_catalog.jsonb_contains(jsonb, jsonb)',
      'pg_catalog.arraycontains(anyarray, anyarray)',
    ])
      await db.query(`ALTER FUNCTION ${f} LEAKPROOF`);
  } finally {
    await db.end();
  }
}

/**
 * Gives `owner` the `events` schema of `database` and what is in it that someone else owns: all of
 * it the first time, and later the tables and functions of migrations another role (a superuser)
 * applied to a store the owner already has (bench/search on a store it reuses).
 */
async function adoptEventsSchema(adminUrl: string, database: string, owner: string): Promise<void> {
  const url = new URL(adminUrl);
  url.pathname = `/${encodeURIComponent(database)}`;
  const db = await connect(url.toString());
  try {
    const to = db.escapeIdentifier(owner);
    const { rows: statements } = await db.query<{ sql: string }>(
      // No events schema yet (roles made before the first migration): nothing to adopt.
      `WITH o AS (SELECT oid FROM pg_roles WHERE rolname = $1),
            n AS (SELECT oid FROM pg_namespace WHERE nspname = 'events')
       SELECT format('ALTER TABLE %s OWNER TO ${to}', c.oid::regclass) AS sql
         FROM pg_class c WHERE c.relnamespace = (SELECT oid FROM n) AND c.relkind IN ('r', 'p')
          AND c.relowner <> (SELECT oid FROM o)
       UNION ALL
       SELECT format('ALTER FUNCTION %s OWNER TO ${to}', p.oid::regprocedure)
         FROM pg_proc p WHERE p.pronamespace = (SELECT oid FROM n) AND p.proowner <> (SELECT oid FROM o)
       UNION ALL
       SELECT format('ALTER SCHEMA events OWNER TO ${to}') FROM pg_namespace
        WHERE nspname = 'events' AND nspowner <> (SELECT oid FROM o)`,
      [owner],
    );
    if (statements.length === 0) return;
    await db.query('BEGIN');
    for (const { sql } of statements) await db.query(sql);
    await db.query('COMMIT');
  } finally {
    await db.end();
  }
}

async function connect(url: string): Promise<pg.Client> {
  const client = adminClient(url);
  await client.connect();
  return client;
}
