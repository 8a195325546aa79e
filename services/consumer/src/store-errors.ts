/**
 * Classifies a store failure. Only SQLSTATE class 22 (data exception) and 23 (integrity
 * constraint violation, 23514 for a month without a partition included) are the record's fault:
 * the same row fails the same way every time, so it is dead-lettered `unpersistable`. Everything
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

export function classifyStoreError(err: unknown): StoreFailure {
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : undefined;
  const message = typeof e?.message === 'string' ? e.message : String(err);
  const sqlstate = code && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
  if (sqlstate && (sqlstate.startsWith('22') || sqlstate.startsWith('23'))) {
    return { kind: 'deterministic', code: sqlstate, message };
  }
  return { kind: 'transient', code, message };
}

/** One line for a dead letter's `detail`: SQLSTATE and message. */
export function describeStoreFailure(f: StoreFailure): string {
  return f.code ? `SQLSTATE ${f.code}: ${f.message}` : f.message;
}
