/**
 * Transaction control on one connection, for work that commits or rolls back as one (the
 * maintenance jobs): a transaction with its isolation level and statement timeout that first
 * takes a transaction-level advisory lock, a statement batch of its own, and a DDL step undone
 * alone when it cannot get its locks in time. Raw SQL on purpose: these are transaction-control
 * statements on a connection the caller holds, which drizzle's transaction API would take over.
 *
 * @example
 * if (await beginLockedTransaction(client, { isolation: 'READ COMMITTED', statementTimeout: '15min', lockKey: ADVISORY_LOCKS.rollupRefresh })) {
 *   await work(client);
 *   await commitTransaction(client);
 * }
 */
import type { AdvisoryLockKey } from './advisory-locks.js';
import { scopeOf } from './cancellable-pool.js';
import { isConnectionFailure, mustDiscard } from './errors.js';
import type { DatabaseConnection, DatabasePool, PooledConnection } from './queryable.js';
import { scopeSetting } from './read-scope.js';

export type IsolationLevel = 'READ COMMITTED' | 'REPEATABLE READ';

export interface LockedTransactionOptions {
  isolation: IsolationLevel;
  /** `statement_timeout` of every statement of the transaction, as PostgreSQL spells it ('15min'). */
  statementTimeout: string;
  /** Key of the transaction-level advisory lock: one per kind of work (`ADVISORY_LOCKS`). */
  lockKey: AdvisoryLockKey;
}

/**
 * Begins a transaction and takes its advisory lock. False when another session holds the lock:
 * the transaction is then rolled back and the connection is free again.
 */
export async function beginLockedTransaction(
  client: DatabaseConnection,
  opts: LockedTransactionOptions,
): Promise<boolean> {
  await client.query(`BEGIN ISOLATION LEVEL ${opts.isolation}`);
  await client.query(`SET LOCAL statement_timeout = '${opts.statementTimeout}'`);
  const lock = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS ok', [
    opts.lockKey,
  ]);
  if (lock.rows[0]?.ok) return true;
  await client.query('ROLLBACK');
  return false;
}

export async function commitTransaction(client: DatabaseConnection): Promise<void> {
  await client.query('COMMIT');
}

/** Rolls back the open transaction; never throws (the connection may be the broken part). */
export async function rollbackTransaction(client: DatabaseConnection): Promise<void> {
  await client.query('ROLLBACK').catch(() => {});
}

/** Runs `work` in a transaction of its own: committed when it resolves, rolled back when it throws. */
export async function inTransaction<T>(
  client: DatabaseConnection,
  work: (client: DatabaseConnection) => Promise<T>,
): Promise<T> {
  await client.query('BEGIN');
  try {
    const result = await work(client);
    await commitTransaction(client);
    return result;
  } catch (err) {
    await rollbackTransaction(client);
    throw err;
  }
}

/**
 * Runs `work` in a transaction on a connection of its own from `pool`: committed when it resolves,
 * rolled back when it throws. With `statementTimeoutMs`, every statement of the transaction times
 * out after it (`SET LOCAL`: the session goes back to the pool with its own timeout). On a pool
 * `scopedPool` made, the transaction carries its scope as each of that pool's statements does (the
 * connection comes from the pool underneath, which has none). A connection
 * that must not be reused (`mustDiscard`: broken, or read-only after a failover), or whose
 * ROLLBACK failed, is destroyed rather than returned to the pool; a broken one is not even asked
 * to roll back (it would wait out another query timeout).
 */
export async function inPooledTransaction<T>(
  pool: DatabasePool,
  work: (client: PooledConnection) => Promise<T>,
  opts: { statementTimeoutMs?: number } = {},
): Promise<T> {
  const client = await pool.connect();
  let discard: Error | undefined;
  try {
    const scope = scopeOf(pool);
    await client.query(
      [
        'BEGIN',
        ...(opts.statementTimeoutMs === undefined
          ? []
          : [`SET LOCAL statement_timeout = ${Math.max(1, Math.round(opts.statementTimeoutMs))}`]),
        ...(scope === undefined
          ? []
          : [`SELECT set_config('observatory.scope', ${client.escapeLiteral(scopeSetting(scope))}, true)`]),
      ].join('; '),
    );
    try {
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      if (!isConnectionFailure(err)) {
        await client.query('ROLLBACK').catch((e: Error) => {
          discard = e;
        });
      }
      throw err;
    }
  } catch (err) {
    if (mustDiscard(err)) discard ??= err as Error;
    throw err;
  } finally {
    // pg-pool destroys a connection released with an error.
    client.release(discard ?? false);
  }
}

/**
 * Runs a DDL step of the open transaction under a savepoint with `lock_timeout`: the error message
 * when it failed (the step is then undone alone, the rest of the transaction stays), else
 * undefined. Creating and detaching a partition both need exclusive locks; waiting for them without
 * a bound would queue the writers' inserts behind the wait.
 */
export async function stepUnderLockTimeout(
  client: DatabaseConnection,
  lockTimeoutMs: number,
  step: () => Promise<unknown>,
): Promise<string | undefined> {
  await client.query('SAVEPOINT ddl_step');
  try {
    await client.query(`SET LOCAL lock_timeout = ${Math.round(lockTimeoutMs)}`);
    await step();
    await client.query('SET LOCAL lock_timeout = 0');
    await client.query('RELEASE SAVEPOINT ddl_step');
    return undefined;
  } catch (err) {
    await client.query('ROLLBACK TO SAVEPOINT ddl_step');
    return (err as Error).message;
  }
}

/**
 * Runs `work` while this process holds the session-level advisory lock `lockKey` on a connection of
 * its own from `pool` (work that must not run twice at once across replicas, e.g. a dead-letter
 * replay). `{ taken: false }` at once when another session holds it; the lock is released with
 * the connection when `work` settles.
 */
export async function withSessionLock<T>(
  pool: DatabasePool,
  lockKey: AdvisoryLockKey,
  work: () => Promise<T>,
): Promise<{ taken: true; value: T } | { taken: false }> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    const lock = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [lockKey]);
    if (!lock.rows[0]?.ok) return { taken: false };
    try {
      return { taken: true, value: await work() };
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [lockKey]).catch((e: Error) => {
        broken = e; // destroyed below: closing the session releases the lock
      });
    }
  } catch (err) {
    if (isConnectionFailure(err)) broken ??= err as Error;
    throw err;
  } finally {
    client.release(broken ?? false);
  }
}
