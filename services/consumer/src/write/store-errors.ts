/**
 * Classifies a store failure. Only SQLSTATE class 22 (data exception), 23 (integrity constraint
 * violation, 23514 for a month without a partition included) and 54 (program limit exceeded:
 * 54000 for an index row over the B-tree or GIN size limit, e.g. a ~6 KB `ce_source`/`ce_id` or
 * tag, or a `search_doc` tsvector over 1 MB) are the record's fault: the same row fails the same
 * way every time, so it is dead-lettered `unpersistable` (a whole batch refused with a class 54
 * error is bisected like any deterministic failure, so only the record at fault is). Everything
 * else (connection errors, class 08, 53 insufficient resources, 57P operator intervention,
 * 40 serialization, and anything unknown) is the store's condition, never a record's: the
 * consumer waits and retries without committing.
 */
export type StoreFailureKind = 'deterministic' | 'transient';

export interface StoreFailure {
  kind: StoreFailureKind;
  /** SQLSTATE or Node.js error code, when known. */
  code: string | undefined;
  message: string;
}

/** SQLSTATE classes that a record causes: 22 data exception, 23 integrity, 54 program limit. */
const DETERMINISTIC_CLASSES: ReadonlySet<string> = new Set(['22', '23', '54']);

export function classifyStoreError(err: unknown): StoreFailure {
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : undefined;
  const message = typeof e?.message === 'string' ? e.message : String(err);
  const sqlstate = code && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
  if (sqlstate && DETERMINISTIC_CLASSES.has(sqlstate.slice(0, 2))) {
    return { kind: 'deterministic', code: sqlstate, message };
  }
  return { kind: 'transient', code, message };
}

/** One line for a dead letter's `detail`: SQLSTATE and message. */
export function describeStoreFailure(f: StoreFailure): string {
  return f.code ? `SQLSTATE ${f.code}: ${f.message}` : f.message;
}
