/**
 * Names for the query bar's autocomplete: the types or sources that start with what was typed,
 * from the names catalog (`events.event_name`, migration 0012) under its scope policy, so a viewer
 * is offered exactly the names of events they may see (the same catalog `VISIBLE_NAMES_SQL` reads
 * for free text). A B-tree range on the catalog's own rows: the cost is the catalog's, never the
 * event table's.
 */
import type { Queryable } from './queryable.js';

/** The catalog names a suggestion can complete. */
export type SuggestedName = 'type' | 'source';

/** Most names one suggestion answers. */
export const NAME_SUGGESTION_LIMIT = 20;
/** Longest prefix looked up; a longer one finds nothing worth offering. */
export const NAME_PREFIX_MAX = 200;

const COLUMNS: Record<SuggestedName, string> = { type: 'ce_type', source: 'ce_source' };

/** Up to `limit` distinct names of `field` starting with `prefix` (case-sensitive, as the filters are), in order. */
export async function suggestNames(
  db: Queryable,
  field: SuggestedName,
  prefix: string,
  limit = NAME_SUGGESTION_LIMIT,
): Promise<string[]> {
  if (prefix.length > NAME_PREFIX_MAX) return [];
  const column = COLUMNS[field];
  const { rows } = await db.query<{ name: string }>(
    `SELECT DISTINCT ${column} AS name FROM events.event_name WHERE ${column} ^@ $1 ORDER BY 1 LIMIT $2`,
    [prefix, Math.min(limit, NAME_SUGGESTION_LIMIT)],
  );
  return rows.map((r) => r.name);
}
