/**
 * The drizzle query builder over a pool or a connection, for the support tables (schema.ts).
 * drizzle only sends `query()` through what it is given, so a connection in a transaction keeps
 * its transaction.
 */
import { drizzle, type NodePgClient, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import type { Queryable } from './queryable.js';

/** One builder a pool or connection: the checkpoint upsert runs with every batch the consumer writes. */
const builders = new WeakMap<Queryable, NodePgDatabase>();

export function orm(db: Queryable): NodePgDatabase {
  let builder = builders.get(db);
  if (!builder) {
    // A `ClientBase` is what drizzle's `Client | PoolClient` have in common for `query()`.
    builder = drizzle(db as NodePgClient);
    builders.set(db, builder);
  }
  return builder;
}
