import type pg from 'pg';

/** A connection pool of the store (`createWritePool`, `createReadPool`). */
export type DatabasePool = pg.Pool;
/** One database session: a connection checked out of a pool, or one of its own. */
export type DatabaseConnection = pg.ClientBase;
/** A connection checked out of a `DatabasePool` (`pool.connect()`); give it back with `release()`. */
export type PooledConnection = pg.PoolClient;
/** A pool, or a connection holding a transaction the statement should join. */
export type Queryable = DatabasePool | DatabaseConnection;
