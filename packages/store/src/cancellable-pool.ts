/**
 * A pool whose statements stop when a signal aborts (a search page's deadline, or its client
 * going away): a statement not yet sent fails at once with the signal's reason; a running one is
 * cancelled on the server, so PostgreSQL stops working for nobody, and fails with that reason.
 * The same holds for the statements of a connection checked out of it (`inPooledTransaction`).
 * `scopedPool` also runs every statement under a reader's scope (`read-scope.ts`).
 *
 * The cancel is PostgreSQL's CancelRequest (protocol 3, what libpq's `PQcancel` sends): a new
 * connection to the same server carrying the backend's process id and secret key, no login, so it
 * needs no free pool connection. It goes unencrypted, as libpq's does before PostgreSQL 17.
 *
 * @example
 * const reads = cancellablePool(pool, AbortSignal.timeout(5_000));
 * await searchEvents(reads, filter, { limit: 50 }); // rejects with the TimeoutError at 5 s
 * await searchEvents(scopedPool(pool, scope, signal), filter, { limit: 50 }); // only the scope's rows
 */
import { connect, type Socket } from 'node:net';
import type pg from 'pg';
import { mustDiscard } from './errors.js';
import type { DatabasePool } from './queryable.js';
import { type ReadScope, scopeSetting } from './read-scope.js';

/** Protocol code of a CancelRequest (1234 << 16 | 5678). */
const CANCEL_REQUEST_CODE = 80_877_102;

/** Sends one `query` on `client`; calls `discard` when the connection must not be pooled again. */
type Run = (client: pg.PoolClient, args: unknown[], discard: () => void) => Promise<unknown>;

/**
 * Planner settings one statement of a `scopedPool` may carry (`PlannedStatement`), set with
 * `SET LOCAL` in its own transaction, so they end with it. For a read the planner misjudges in a
 * known way and whose right plan is known (see the statement that sets them).
 */
export interface PlannerSettings {
  enable_bitmapscan?: 'off';
}

/** The settings a `PlannedStatement` may carry: only these names are ever sent. */
const PLANNER_SETTINGS: ReadonlySet<string> = new Set<keyof PlannerSettings>(['enable_bitmapscan']);

/** A statement with the planner settings it runs under (on a `scopedPool`; another pool ignores them). */
export interface PlannedStatement {
  text: string;
  values: unknown[];
  planner?: PlannerSettings;
}

/** The scope of each pool `scopedPool` made, for the reads that plan by it (the histogram). */
const scopes = new WeakMap<DatabasePool, ReadScope>();

/** `pool` with `query` bound to `signal`; every other member is the pool's own. */
export function cancellablePool(pool: DatabasePool, signal: AbortSignal): DatabasePool {
  return boundPool(pool, signal, (client, args) =>
    (client.query as (...a: unknown[]) => Promise<unknown>)(...args),
  );
}

/**
 * `pool` with every `query` run as its own transaction under `scope` (`BEGIN`, the setting
 * `observatory.scope` local to it, a `PlannedStatement`'s planner settings, the statement,
 * `COMMIT`) on one connection, and bound to `signal` as `cancellablePool` is (default: never
 * aborted).
 */
export function scopedPool(
  pool: DatabasePool,
  scope: ReadScope,
  signal: AbortSignal = new AbortController().signal,
): DatabasePool {
  const setting = scopeSetting(scope);
  const scoped = boundPool(pool, signal, async (client, args, discard) => {
    try {
      // One round trip for both: the simple protocol runs them as one string (the value is quoted).
      await client.query(
        `BEGIN; SELECT set_config('observatory.scope', ${client.escapeLiteral(setting)}, true)${plannerOf(args[0])}`,
      );
      const result = await (client.query as (...a: unknown[]) => Promise<unknown>)(...args);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      // A broken connection is discarded at once (a ROLLBACK sent on it would outlive its release
      // and fail unheard). Any other is rolled back: one left inside the transaction would hand
      // the scope to the next statement on it.
      if (mustDiscard(err)) discard();
      else await client.query('ROLLBACK').catch(discard);
      throw err;
    }
  });
  scopes.set(scoped, scope);
  return scoped;
}

/** `SET LOCAL` of the planner settings a statement carries (`PlannedStatement`), else nothing. */
function plannerOf(statement: unknown): string {
  const planner = (statement as Partial<PlannedStatement> | undefined)?.planner ?? {};
  return Object.entries(planner)
    .filter(([name, value]) => PLANNER_SETTINGS.has(name) && (value === 'on' || value === 'off'))
    .map(([name, value]) => `; SET LOCAL ${name} = ${value}`)
    .join('');
}

/** The scope `db` reads under, when `scopedPool` made it. */
export function scopeOf(db: DatabasePool): ReadScope | undefined {
  return scopes.get(db);
}

function boundPool(pool: DatabasePool, signal: AbortSignal, run: Run): DatabasePool {
  const query = async (...args: unknown[]) => {
    signal.throwIfAborted();
    const client = await pool.connect();
    let broken = false;
    try {
      return await untilAborted(client, signal, () =>
        run(client, args, () => {
          broken = true;
        }),
      );
    } catch (err) {
      // A terminated backend fails the statement before its socket closes: released as usual, the
      // connection would go back to the pool and fail the next page that takes it.
      broken ||= mustDiscard(err);
      throw err;
    } finally {
      // A connection whose statement was cancelled is closed, not reused: a late cancel must not
      // land on the next statement another page sends on it.
      client.release(signal.aborted || broken);
    }
  };
  // A connection checked out of the bound pool (a transaction of several statements, such as a
  // count under its own budget) is bound too: a statement of its own must not outlive the signal.
  const connect = async () => {
    signal.throwIfAborted();
    return boundConnection(await pool.connect(), signal);
  };
  return overriding(pool, { query, connect });
}

/** `client` with `query` bound to `signal`; released after an abort, it is closed, not pooled. */
function boundConnection(client: pg.PoolClient, signal: AbortSignal): pg.PoolClient {
  const query = (...args: unknown[]) =>
    untilAborted(client, signal, () => (client.query as (...a: unknown[]) => Promise<unknown>)(...args));
  const release = (err?: Error | boolean) => client.release(err || signal.aborted);
  return overriding(client, { query, release });
}

/** `target` with `members` in place of its own of those names; its other methods stay bound to it. */
function overriding<T extends object>(target: T, members: Record<string, unknown>): T {
  return new Proxy(target, {
    get(self, key) {
      if (typeof key === 'string' && Object.hasOwn(members, key)) return members[key];
      const value = Reflect.get(self, key, self);
      return typeof value === 'function' ? value.bind(self) : value;
    },
  });
}

/**
 * Runs `start`'s statement on `client` until it settles or `signal` aborts, whichever comes first:
 * at the abort the backend is sent a cancel and the caller is rejected with the signal's reason at
 * once, without waiting for the cancel to land.
 */
async function untilAborted<T>(
  client: pg.PoolClient,
  signal: AbortSignal,
  start: () => Promise<T>,
): Promise<T> {
  signal.throwIfAborted();
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => {
      cancelBackend(client);
      reject(signal.reason);
    };
  });
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const running = start();
    running.catch(() => {});
    return await Promise.race([running, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** Sends the CancelRequest for `client`'s backend; a failure to reach the server is ignored. */
function cancelBackend(client: pg.PoolClient): void {
  const { host, port, processID, secretKey } = client as pg.PoolClient & {
    host: string;
    port: number;
    processID: number | null;
    secretKey: number | null;
  };
  if (processID === null || secretKey === null) return;
  const packet = Buffer.alloc(16);
  packet.writeInt32BE(16, 0);
  packet.writeInt32BE(CANCEL_REQUEST_CODE, 4);
  packet.writeInt32BE(processID, 8);
  packet.writeInt32BE(secretKey, 12);
  const socket: Socket = host.startsWith('/') ? connect(`${host}/.s.PGSQL.${port}`) : connect(port, host);
  socket.setTimeout(3_000, () => socket.destroy());
  socket.on('error', () => {});
  socket.on('connect', () => socket.end(packet));
}
