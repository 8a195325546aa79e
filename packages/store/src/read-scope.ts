/**
 * What a reader may see of the events, as PostgreSQL enforces it (migrations 0011, 0012):
 * row-level security on `events.cloud_event`, `events.event_rollup_hourly` and the names catalog
 * `events.event_name` admits, through one predicate (`events.scope_admits`), to every role but the
 * owner and the writer, only the rows of the scope the transaction carries in the setting
 * `observatory.scope` (JSON, `set_config(..., true)`). No setting, no rows: a read that forgets
 * its scope finds nothing rather than everything.
 *
 * A row is in a scope when any of its lists admits it (they add up; empty lists admit nothing).
 *
 * @example
 * const scope: ReadScope = { sources: ['/plant/a'], sourcePrefixes: [], typePrefixes: ['com.example.'], producers: [] };
 * await searchEvents(scopedPool(pool, scope, signal), filter, { limit: 50 });
 */
import type { Queryable } from './queryable.js';

/** Everything. */
export interface WholeScope {
  all: true;
}

/** The rows admitted by any of the lists. */
export interface PartialScope {
  all?: false;
  /** Exact `ce_source` values. */
  sources: readonly string[];
  /** Leading parts of `ce_source` (`/plant/` admits `/plant/a/b`). */
  sourcePrefixes: readonly string[];
  /** Leading parts of `ce_type`. */
  typePrefixes: readonly string[];
  /** The producer's `authid` or its `namespace` (the `producer` column; absent on older rows). */
  producers: readonly string[];
}

export type ReadScope = WholeScope | PartialScope;

export const WHOLE_SCOPE: WholeScope = { all: true };
export const EMPTY_SCOPE: PartialScope = { sources: [], sourcePrefixes: [], typePrefixes: [], producers: [] };

/** The value of `observatory.scope` the policies of migrations 0011 and 0012 read. */
export function scopeSetting(scope: ReadScope): string {
  if (scope.all) return JSON.stringify({ all: true });
  const { sources, sourcePrefixes, typePrefixes, producers } = scope;
  return JSON.stringify({ sources, sourcePrefixes, typePrefixes, producers });
}

/**
 * Whether the hourly rollup holds everything of `scope` a histogram counts: the rollup has no
 * producer column, so its policy cannot admit rows by producer (packages/store/DESIGN.md,
 * "Row visibility").
 */
export function rollupCovers(scope: ReadScope | undefined): boolean {
  return scope === undefined || scope.all === true || scope.producers.length === 0;
}

/**
 * The exact sources that are everything `scope` admits (its only list that is not empty), else
 * undefined. A read under such a scope may add `ce_source = ANY(those)` without changing its rows,
 * since the policy admits no other, and the condition is an index path the policy is not: the
 * source index reads the viewer's rows only (packages/store/DESIGN.md, "A path by source").
 */
export function scopeSources(scope: ReadScope | undefined): readonly string[] | undefined {
  if (scope === undefined || scope.all === true) return undefined;
  const { sources, sourcePrefixes, typePrefixes, producers } = scope;
  const onlySources =
    sources.length > 0 && sourcePrefixes.length + typePrefixes.length + producers.length === 0;
  return onlySources ? sources : undefined;
}

/**
 * Whether the role `db` logs in as escapes the row-level security of the event table: a superuser,
 * a role with BYPASSRLS, or the table's owner (or a role with its privileges). Scopes mean nothing
 * on such a connection. Raw SQL: a catalog question.
 */
export async function bypassesRowSecurity(db: Queryable): Promise<boolean> {
  const { rows } = await db.query<{ bypasses: boolean }>(
    `SELECT r.rolsuper OR r.rolbypassrls OR pg_has_role(current_user, c.relowner, 'USAGE') AS bypasses
       FROM pg_roles r, pg_class c
      WHERE r.rolname = current_user AND c.oid = 'events.cloud_event'::regclass`,
  );
  return rows[0]?.bypasses ?? true;
}
