/**
 * Every statement on `events.saved_search` (migration 0013): a viewer's named searches, each the
 * query string of a search URL. The search service lists, saves and deletes them for the viewer
 * of the request.
 *
 * A viewer sees and touches only their own rows, twice over: every statement says
 * `owner = viewer`, and each runs in a transaction carrying the viewer in `observatory.viewer`,
 * which the table's row-level security compares with `owner` for every role but the owner of the
 * table. The search's read pool is read-only by default; these transactions ask for READ WRITE
 * (the reader role is granted writes on this table only, grants.ts).
 *
 * @example
 * const outcome = await saveSearch(pool, viewer.subject, 'payments failing', 'q=failed&range=24h');
 * if ('saved' in outcome) console.log(outcome.saved.id);
 * for (const s of await listSavedSearches(pool, viewer.subject)) console.log(s.name, s.params);
 */
import { and, asc, eq, sql } from 'drizzle-orm';
import { orm } from './orm.js';
import type { DatabasePool, PooledConnection } from './queryable.js';
import { savedSearch } from './schema.js';
import { inPooledTransaction } from './transactions.js';

/** The bounds the table's constraints enforce, and the count per viewer `saveSearch` keeps to. */
export const SAVED_SEARCH_LIMITS = {
  /** Characters of a name (at least 1). */
  nameChars: 100,
  /** Bytes of the parameters (UTF-8). */
  paramsBytes: 2048,
  /** Saved searches per viewer. */
  perViewer: 100,
} as const;

export interface SavedSearch {
  id: string;
  name: string;
  /** The search URL's query string, without `?`. */
  params: string;
  createdAt: Date;
}

/** `saved`, or `full`: the viewer has `perViewer` searches and the name is none of them. */
export type SaveOutcome = { saved: SavedSearch } | { full: true };

const COLUMNS = {
  id: savedSearch.id,
  name: savedSearch.name,
  params: savedSearch.params,
  createdAt: savedSearch.createdAt,
};

/**
 * Runs `work` in a transaction of its own carrying `viewer` for the table's row-level security;
 * `write`: the transaction may write (the read pool's sessions default to read-only).
 */
function asViewer<T>(
  pool: DatabasePool,
  viewer: string,
  write: boolean,
  work: (client: PooledConnection) => Promise<T>,
): Promise<T> {
  return inPooledTransaction(pool, async (client) => {
    // SET TRANSACTION must come before the transaction's first query.
    if (write) await client.query('SET TRANSACTION READ WRITE');
    await client.query(`SELECT set_config('observatory.viewer', $1, true)`, [viewer]);
    return work(client);
  });
}

/** The viewer's saved searches, by name. */
export function listSavedSearches(pool: DatabasePool, viewer: string): Promise<SavedSearch[]> {
  return asViewer(pool, viewer, false, (client) =>
    orm(client)
      .select(COLUMNS)
      .from(savedSearch)
      .where(eq(savedSearch.owner, viewer))
      .orderBy(asc(savedSearch.name)),
  );
}

/**
 * Saves `params` under `name` for `viewer`, replacing the parameters of a search of that name.
 * A new name beyond `limit` searches answers `full`. The viewer's rows are locked first and counted
 * by the next statement, so of two saves at once the second waits for the first to commit and then
 * counts its row too (each statement of a READ COMMITTED transaction sees what committed before it).
 * Names and parameters out of bounds fail on the table's constraints (SQLSTATE 23514): check them
 * before (`SAVED_SEARCH_LIMITS`).
 */
export function saveSearch(
  pool: DatabasePool,
  viewer: string,
  name: string,
  params: string,
  limit: number = SAVED_SEARCH_LIMITS.perViewer,
): Promise<SaveOutcome> {
  return asViewer(pool, viewer, true, async (client) => {
    const db = orm(client);
    const mine = eq(savedSearch.owner, viewer);
    await db.select({ id: savedSearch.id }).from(savedSearch).where(mine).for('update');
    const held = await db.select({ name: savedSearch.name }).from(savedSearch).where(mine);
    if (held.length >= limit && !held.some((s) => s.name === name)) return { full: true };
    const [saved] = await db
      .insert(savedSearch)
      .values({ owner: viewer, name, params })
      .onConflictDoUpdate({
        target: [savedSearch.owner, savedSearch.name],
        set: { params: sql`excluded.params` },
      })
      .returning(COLUMNS);
    if (!saved) throw new Error('the saved search insert returned no row');
    return { saved };
  });
}

/** Deletes the viewer's search `id`; false when the viewer has none of that id. */
export function deleteSavedSearch(pool: DatabasePool, viewer: string, id: string): Promise<boolean> {
  return asViewer(pool, viewer, true, async (client) => {
    const { rowCount } = await orm(client)
      .delete(savedSearch)
      .where(and(eq(savedSearch.owner, viewer), eq(savedSearch.id, id)));
    return (rowCount ?? 0) > 0;
  });
}

/** `renamed`, `missing` (the viewer has no search `id`), or `taken` (the viewer has one of that name). */
export type RenameOutcome = 'renamed' | 'missing' | 'taken';

/**
 * Renames the viewer's search `id`. The name is checked against the viewer's others first; two
 * renames racing to one name meet the table's unique key (23505) instead.
 */
export function renameSavedSearch(
  pool: DatabasePool,
  viewer: string,
  id: string,
  name: string,
): Promise<RenameOutcome> {
  return asViewer(pool, viewer, true, async (client) => {
    const db = orm(client);
    const mine = eq(savedSearch.owner, viewer);
    const [clash] = await db
      .select({ id: savedSearch.id })
      .from(savedSearch)
      .where(and(mine, eq(savedSearch.name, name)));
    if (clash) return clash.id === id ? 'renamed' : 'taken';
    const { rowCount } = await db
      .update(savedSearch)
      .set({ name })
      .where(and(mine, eq(savedSearch.id, id)));
    return (rowCount ?? 0) > 0 ? 'renamed' : 'missing';
  });
}
