import type pg from 'pg';

/** A pool, or a checked-out client holding a transaction the statement should join. */
export type Queryable = pg.Pool | pg.ClientBase;
