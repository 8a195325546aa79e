/**
 * The privileges of the writer and reader roles (packages/store/DESIGN.md, "Three roles"), granted
 * by the migration runner after the migrations on every run (GRANT is idempotent), so a table a
 * later migration adds is covered on the run that adds it. The role running the migrations owns
 * every object; the roles must exist already. Raw SQL on purpose: privileges, which the drizzle
 * schema does not describe.
 *
 * - both: USAGE on schema `events`, SELECT on its tables but the partitions of
 *   `events.cloud_event`.
 * - reader: nothing on the partitions nor on detached months, revoked on every run (a partition
 *   named directly escapes the row-level security of its parent, migration 0011), and no default
 *   privileges; the writes of the saved searches on their table, whose row-level security
 *   (migration 0013) admits only the rows of the transaction's viewer, and the records of ended
 *   login sessions (migration 0021: added, and deleted once expired).
 * - writer, besides: SELECT on the partitions, and by default on every table the migrating role
 *   creates later there (ALTER DEFAULT PRIVILEGES: the months that
 *   `events.create_month_partition`, SECURITY DEFINER, adds); exactly the writes of the consumer
 *   and the jobs; EXECUTE on the two partition functions of migration 0009; and the policies that
 *   admit it to every row of the tables under row-level security.
 *
 * @example
 * await grantRoles(client, { writer: 'observatory_writer', reader: 'observatory_reader' });
 */
import type { DatabaseConnection } from './queryable.js';

export interface RoleGrants {
  /** Role of the consumer and the jobs. */
  writer?: string;
  /** Role of the search service. */
  reader?: string;
}

/** Table -> what the writer does to it besides SELECT, and who does it. */
const WRITER_TABLES: Record<string, string> = {
  // consumer: insertEvents (ON CONFLICT DO NOTHING ... RETURNING reads through SELECT)
  'events.cloud_event': 'INSERT',
  // consumer: the names of its events, by the trigger its insert fires (migration 0012)
  'events.event_name': 'INSERT',
  // consumer: upsertCheckpoints (ON CONFLICT DO UPDATE), deleteCheckpoints (clear-checkpoints)
  'events.consumer_checkpoint': 'INSERT, UPDATE, DELETE',
  // jobs, rollup-refresh: DELETE then INSERT of the hours touched
  'events.event_rollup_hourly': 'INSERT, DELETE',
  // jobs, rollup-refresh: the watermark's upsert
  'events.event_rollup_watermark': 'INSERT, UPDATE',
};

const WRITER_FUNCTIONS = ['events.create_month_partition(date)', 'events.detach_month_partition(text)'];

/** Table -> what the reader does to it besides SELECT (search: saved searches, ended sessions). */
const READER_TABLES: Record<string, string> = {
  // INSERT ... ON CONFLICT DO UPDATE, and SELECT ... FOR UPDATE (which needs UPDATE)
  'events.saved_search': 'INSERT, UPDATE, DELETE',
  // recordEndedSession: INSERT ... ON CONFLICT DO NOTHING, and DELETE of expired rows (its policy)
  'events.ended_session': 'INSERT, DELETE',
};

/** Tables under row-level security (migrations 0011, 0012): the writer reads and writes all their rows. */
const SCOPED_TABLES = ['events.cloud_event', 'events.event_rollup_hourly', 'events.event_name'];

/** The tables of `events`; `partition`: a partition of the event table, or a month detached from it. */
const TABLES_SQL = `SELECT format('%I.%I', n.nspname, c.relname) AS name,
       (c.relispartition OR c.relname ~ '^cloud_event_') AS partition
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'events' AND c.relkind IN ('r', 'p')`;

/** Grants `roles` their privileges on the events schema; run it in the migrating role's transaction. */
export async function grantRoles(client: DatabaseConnection, roles: RoleGrants): Promise<void> {
  const names = [roles.writer, roles.reader].filter((r): r is string => !!r);
  if (names.length === 0) return;
  const all = names.map((r) => client.escapeIdentifier(r)).join(', ');
  const { rows: tables } = await client.query<{ name: string; partition: boolean }>(TABLES_SQL);
  const parents = tables.filter((t) => !t.partition).map((t) => t.name);
  const partitions = tables.filter((t) => t.partition).map((t) => t.name);
  await client.query(`GRANT USAGE ON SCHEMA events TO ${all}`);
  await client.query(`GRANT SELECT ON ${parents.join(', ')} TO ${all}`);
  if (roles.reader) {
    const reader = client.escapeIdentifier(roles.reader);
    await client.query(`ALTER DEFAULT PRIVILEGES IN SCHEMA events REVOKE SELECT ON TABLES FROM ${reader}`);
    if (partitions.length) await client.query(`REVOKE ALL ON ${partitions.join(', ')} FROM ${reader}`);
    for (const [table, privileges] of Object.entries(READER_TABLES)) {
      await client.query(`GRANT ${privileges} ON ${table} TO ${reader}`);
    }
  }
  if (!roles.writer) return;
  const writer = client.escapeIdentifier(roles.writer);
  await client.query(`ALTER DEFAULT PRIVILEGES IN SCHEMA events GRANT SELECT ON TABLES TO ${writer}`);
  if (partitions.length) await client.query(`GRANT SELECT ON ${partitions.join(', ')} TO ${writer}`);
  for (const table of SCOPED_TABLES) {
    // One policy per table for whichever role is the writer on this run.
    const policy = `${table.slice('events.'.length)}_writer`;
    await client.query(`DROP POLICY IF EXISTS ${policy} ON ${table}`);
    await client.query(`CREATE POLICY ${policy} ON ${table} TO ${writer} USING (true) WITH CHECK (true)`);
  }
  for (const [table, privileges] of Object.entries(WRITER_TABLES)) {
    await client.query(`GRANT ${privileges} ON ${table} TO ${writer}`);
  }
  // jobs: recordMaintenanceRun inserts under LOCK TABLE ... SHARE ROW EXCLUSIVE, which needs
  // MAINTAIN (PostgreSQL 17+: lock, vacuum, analyze) or, before 17, UPDATE.
  const { rows } = await client.query<{ v: number }>(
    `SELECT current_setting('server_version_num')::int AS v`,
  );
  const lock = (rows[0]?.v ?? 0) >= 170_000 ? 'MAINTAIN' : 'UPDATE';
  await client.query(`GRANT INSERT, ${lock} ON events.maintenance_run TO ${writer}`);
  await client.query(`GRANT EXECUTE ON FUNCTION ${WRITER_FUNCTIONS.join(', ')} TO ${writer}`);
}
