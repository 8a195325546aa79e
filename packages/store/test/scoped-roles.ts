/**
 * For the row-visibility tests: a database of their own with the three roles (migrated as the
 * owner, the writer and the reader granted), a pool per role, scopes and events to see or not.
 */
import { createDatabase, createDatabaseRoles, type DatabaseRoles } from '@event-observatory/devstack';
import { afterAll, beforeAll, inject } from 'vitest';
import {
  createReadPool,
  createWritePool,
  type DatabasePool,
  type EventInsertRow,
  migrate,
  type PartialScope,
  type ReadScope,
  refreshHorizon,
  refreshRollup,
} from '../src/index.js';
import { row } from './rows.js';

export interface RoleDatabase {
  roles: DatabaseRoles;
  owner: DatabasePool;
  writer: DatabasePool;
  /** One connection: a scope left on it would show in the next statement. */
  reader: DatabasePool;
}

/**
 * Registers the file's setup and teardown of a database named after `prefix`; its pools are there
 * from the file's first `beforeAll` on (this one runs before those registered after it).
 */
export function useRoleDatabase(prefix: string): RoleDatabase {
  const db = {} as RoleDatabase;
  beforeAll(async () => {
    const { databaseUrl } = inject('stack');
    const name = `${prefix}_${Date.now().toString(36)}`;
    await createDatabase(databaseUrl, name);
    const roles = await createDatabaseRoles(databaseUrl, name);
    await migrate({ url: roles.owner.url, writerRole: roles.writer.name, readerRole: roles.reader.name });
    Object.assign(db, {
      roles,
      owner: createWritePool({ url: roles.owner.url, max: 1 }),
      writer: createWritePool({ url: roles.writer.url, max: 1 }),
      reader: createReadPool({ url: roles.reader.url, max: 1 }),
    });
  });
  afterAll(async () => {
    await Promise.all([db.owner?.end(), db.writer?.end(), db.reader?.end()]);
  });
  return db;
}

/** The start of the previous hour: in a bounded partition of this month or the last. */
export const PREVIOUS_HOUR = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3_600_000);

/** A scope of the given lists, the others empty. */
export const scope = (lists: Partial<PartialScope>): ReadScope => ({
  sources: [],
  sourcePrefixes: [],
  typePrefixes: [],
  producers: [],
  ...lists,
});

/** An event a minute after `at`, sent by `producer` (null: unknown). */
export function scopedEvent(
  id: string,
  source: string,
  type: string,
  producer: object | null,
  at: Date = PREVIOUS_HOUR,
): EventInsertRow {
  const time = new Date(at.getTime() + 60_000).toISOString();
  return row(id, {
    source,
    type,
    occurredAt: time,
    raw: JSON.stringify({ specversion: '1.0', id, source, type, time }),
    producer: producer && JSON.stringify(producer),
    offset: String(id.charCodeAt(0)),
  });
}

/** Counts every event stored so far into the hourly rollup, as the refresh job does (as the writer). */
export async function refreshRollupNow(writer: DatabasePool): Promise<void> {
  const client = await writer.connect();
  try {
    const horizon = await refreshHorizon(client);
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    await refreshRollup(client, horizon);
    await client.query('COMMIT');
  } finally {
    client.release();
  }
}
