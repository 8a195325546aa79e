/**
 * What a failed statement says about its cause, for the store's users to decide what to do: retry,
 * give up on a row, drop a connection, or tell a reader. The one place that reads SQLSTATEs and
 * node-postgres' error shapes; no service compares error codes itself.
 *
 * - A row's fault (`classifyStoreError` says `deterministic`): SQLSTATE class 22 (data exception),
 *   23 (integrity constraint violation, 23514 for a month without a partition included) and 54
 *   (program limit exceeded: 54000 for an index row over the B-tree or GIN size limit, e.g. a
 *   ~6 KB `ce_source`/`ce_id` or tag, or a `search_doc` tsvector over 1 MB). The same row fails the
 *   same way every time.
 * - Everything else is the store's condition (`transient`): connection errors and class 08, 53
 *   insufficient resources, 57P operator intervention, 40 serialization, 25006 read-only after a
 *   failover, timeouts, and anything unknown. Waiting and retrying is the answer.
 * - A connection that must leave the pool (`mustDiscard`): it is broken (`isConnectionFailure`:
 *   class 08, 57P, a socket error, or no answer at all), or it answered read-only (`isReadOnly`),
 *   as a connection to a primary demoted by a failover does.
 *
 * @example
 * const failure = classifyStoreError(err);
 * if (failure.kind === 'deterministic') deadLetter(record, describeStoreFailure(failure));
 */

export type StoreFailureKind = 'deterministic' | 'transient';

export interface StoreFailure {
  kind: StoreFailureKind;
  /** SQLSTATE or Node.js error code, when known. */
  code: string | undefined;
  message: string;
}

/** SQLSTATE classes that a row causes: 22 data exception, 23 integrity, 54 program limit. */
const ROW_FAULT_CLASSES: ReadonlySet<string> = new Set(['22', '23', '54']);

/** SQLSTATE 57014: the server cancelled the statement (its `statement_timeout` ran out). */
const QUERY_CANCELED = '57014';

/** SQLSTATE 25006: the session is read-only, as on a standby or a primary demoted by a failover. */
const READ_ONLY_SQL_TRANSACTION = '25006';

/** pg-pool's errors when `connectionTimeoutMillis` elapses (queued, or opening a new connection). */
const ACQUIRE_TIMEOUT_MESSAGES: ReadonlySet<string> = new Set([
  'timeout exceeded when trying to connect',
  'Connection terminated due to connection timeout',
]);

/**
 * The error's code, or its cause's: drizzle wraps the driver's error in one of its own. A SQLSTATE
 * (five characters) or a Node.js code (`ECONNRESET`); undefined when the error carries none
 * (node-postgres' `Query read timeout`, a connection ended mid-statement).
 */
export function errorCodeOf(err: unknown): string | undefined {
  const e = err as { code?: unknown; cause?: unknown } | null | undefined;
  if (typeof e?.code === 'string') return e.code;
  return e?.cause === undefined || e.cause === err ? undefined : errorCodeOf(e.cause);
}

/** The SQLSTATE of `err` (or of its cause), when PostgreSQL answered with one. */
export function sqlstateOf(err: unknown): string | undefined {
  const code = errorCodeOf(err);
  return code !== undefined && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** Whether a failed write is the row's fault (`deterministic`) or the store's condition (`transient`). */
export function classifyStoreError(err: unknown): StoreFailure {
  const message =
    typeof (err as { message?: unknown } | null)?.message === 'string'
      ? (err as { message: string }).message
      : String(err);
  const sqlstate = sqlstateOf(err);
  if (sqlstate && ROW_FAULT_CLASSES.has(sqlstate.slice(0, 2))) {
    return { kind: 'deterministic', code: sqlstate, message };
  }
  return { kind: 'transient', code: errorCodeOf(err), message };
}

/** One line for a log or a dead letter's `detail`: SQLSTATE and message. */
export function describeStoreFailure(f: StoreFailure): string {
  return f.code ? `SQLSTATE ${f.code}: ${f.message}` : f.message;
}

/**
 * A failure that leaves the connection unusable: class 08 (connection exception), 57P (the server
 * shutting down), a socket error (`E…`), or no code at all (node-postgres' query timeout, after
 * which the connection is out of step). Such a connection is not asked to roll back: it would
 * wait out another timeout, or answer a later statement with this one's reply.
 */
export function isConnectionFailure(err: unknown): boolean {
  const code = errorCodeOf(err);
  return code === undefined || code.startsWith('08') || code.startsWith('57P') || code.startsWith('E');
}

/** Whether the server refused a write because the session is read-only (25006, after a failover). */
export function isReadOnly(err: unknown): boolean {
  return errorCodeOf(err) === READ_ONLY_SQL_TRANSACTION;
}

/**
 * Whether the connection that gave `err` must leave the pool: it is broken, or it answered
 * read-only and may still point at the old primary, while a fresh connection reaches the new one.
 */
export function mustDiscard(err: unknown): boolean {
  return isConnectionFailure(err) || isReadOnly(err);
}

/** Whether `err` is PostgreSQL's cancellation of a statement that ran out of its `statement_timeout`. */
export function isStatementTimeout(err: unknown): boolean {
  return errorCodeOf(err) === QUERY_CANCELED;
}

/** Whether `err` is pg-pool's connection-timeout error (counted in `pool_connections_timeout_total`). */
export function isAcquireTimeout(err: unknown): boolean {
  return err instanceof Error && ACQUIRE_TIMEOUT_MESSAGES.has(err.message);
}
