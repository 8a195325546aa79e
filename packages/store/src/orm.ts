/**
 * The drizzle query builder over a pool or a connection, for the support tables (schema.ts).
 * drizzle only sends `query()` through what it is given, so a connection in a transaction keeps
 * its transaction.
 */
import { drizzle, type NodePgClient } from 'drizzle-orm/node-postgres';
import type { Queryable } from './queryable.js';

export function orm(db: Queryable) {
  // A `ClientBase` is what drizzle's `Client | PoolClient` have in common for `query()`.
  return drizzle(db as NodePgClient);
}
