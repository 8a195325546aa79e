/** A freshly migrated database on the devstack PostgreSQL for one test file, with its write pool. */
import { createDatabase } from '@event-observatory/devstack';
import { afterAll, beforeAll, inject } from 'vitest';
import { createWritePool, type DatabasePool, migrate } from '../src/index.js';

/** The URL of a new database on the devstack PostgreSQL, named after `prefix`, with every migration. */
export async function createMigratedDatabase(prefix: string): Promise<string> {
  const url = await createDatabase(inject('stack').databaseUrl, `${prefix}_${Date.now().toString(36)}`);
  await migrate({ url });
  return url;
}

/** Registers the file's setup and teardown; call the returned function inside a test for the pool. */
export function useMigratedDatabase(prefix: string): () => DatabasePool {
  let pool: DatabasePool | undefined;
  beforeAll(async () => {
    pool = createWritePool({ url: await createMigratedDatabase(prefix) });
  });
  afterAll(async () => {
    await pool?.end();
  });
  return () => {
    if (!pool) throw new Error('the migrated database is set up in beforeAll');
    return pool;
  };
}
