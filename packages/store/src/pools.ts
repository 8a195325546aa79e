/**
 * The two connection pools of the store and their `pool_connections_*` gauges and timers.
 *
 * - `observatory-write` (consumer, jobs): 6 connections; server-side `statement_timeout` 30 s and
 *   `idle_in_transaction_session_timeout` 60 s by default (`statementTimeoutMs`,
 *   `idleInTransactionTimeoutMs`).
 * - `observatory-read` (search): 8 connections, read-only sessions, server-side statement timeout
 *   2 s, work_mem 32 MB, no parallel workers (`READ_PARALLEL_WORKERS`).
 * - Both: connection timeout 3 s, sessions in UTC, TLS as the URL's libpq parameters say
 *   (`connection.ts`), TCP keepalive after 10 s idle, and a client-side bound on every round trip
 *   (`queryTimeoutMs`: the statement timeout plus as much again, at most 5 s more), so a
 *   statement whose connection went silent (a dropped network path, no RST) fails instead of
 *   waiting for TCP's retransmissions to give up (~15 minutes).
 *
 * @example
 * const pool = createWritePool({ url, registry });
 * await insertEvents(pool, rows);
 */
import { createTimer, type Timer } from '@event-observatory/service-kit/metrics';
import pg from 'pg';
import { Counter, Gauge, type Registry } from 'prom-client';
import { connectionConfig } from './connection.js';
import { isAcquireTimeout } from './errors.js';
import type { DatabasePool } from './queryable.js';

export type PoolName = 'observatory-write' | 'observatory-read';

export interface PoolOptions {
  url: string;
  /** Registers the pool's `pool_connections_*` meters (label `pool`) in this registry. */
  registry?: Registry;
  /** Overrides the default size (6 for write, 8 for read). */
  max?: number;
  connectionTimeoutMs?: number;
}

export interface WritePoolOptions extends PoolOptions {
  /** Session `statement_timeout`; default `WRITE_STATEMENT_TIMEOUT_MS`. A transaction may `SET LOCAL` more. */
  statementTimeoutMs?: number;
  /** Session `idle_in_transaction_session_timeout`; default `IDLE_IN_TRANSACTION_TIMEOUT_MS`. */
  idleInTransactionTimeoutMs?: number;
  /**
   * Client-side bound on one statement's answer; default `queryTimeoutMs(statementTimeoutMs)`. A
   * user whose transactions `SET LOCAL` a longer statement timeout (the jobs) raises it above that.
   */
  queryTimeoutMs?: number;
}

export const WRITE_POOL_SIZE = 6;
export const READ_POOL_SIZE = 8;
export const CONNECTION_TIMEOUT_MS = 3_000;
export const READ_STATEMENT_TIMEOUT_MS = 2_000;
/** The consumer's batch insert takes milliseconds; 30 s is an outage, not a slow batch. */
export const WRITE_STATEMENT_TIMEOUT_MS = 30_000;
/** The server ends a transaction whose client went quiet this long, releasing its locks. */
export const IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000;
/** TCP keepalive starts probing an idle connection after this long. */
export const KEEPALIVE_DELAY_MS = 10_000;
const READ_WORK_MEM = '32MB';
/**
 * `max_parallel_workers_per_gather` of a read session: none. A search page already runs its
 * statements side by side (rows, facets, histogram), and with PostgreSQL's default of two workers
 * each a page took up to nine backends, more than a small database's cores: on 2 cores and the
 * skewed 5 M-event bench store, a text and type page read 385 ms at p50 with workers, 261 ms
 * without (bench/search). It also bounds what search takes from the writers on a shared database:
 * one backend per read connection.
 */
const READ_PARALLEL_WORKERS = 0;

/** How long the client waits for a statement's answer: its server-side timeout, plus up to 5 s. */
export function queryTimeoutMs(statementTimeoutMs: number): number {
  return statementTimeoutMs + Math.min(5_000, statementTimeoutMs);
}

/** Pool of the writers: UTC sessions, 6 connections, statement and idle-in-transaction timeouts. */
export function createWritePool(opts: WritePoolOptions): DatabasePool {
  const statementTimeout = opts.statementTimeoutMs ?? WRITE_STATEMENT_TIMEOUT_MS;
  const idleTimeout = opts.idleInTransactionTimeoutMs ?? IDLE_IN_TRANSACTION_TIMEOUT_MS;
  return createPool(
    'observatory-write',
    opts,
    opts.max ?? WRITE_POOL_SIZE,
    `-c TimeZone=UTC -c statement_timeout=${ms(statementTimeout)} -c idle_in_transaction_session_timeout=${ms(idleTimeout)}`,
    ms(opts.queryTimeoutMs ?? queryTimeoutMs(statementTimeout)),
  );
}

/** Pool of the readers: UTC, read-only, statement timeout 2 s, 8 connections, no parallel workers. */
export function createReadPool(opts: PoolOptions): DatabasePool {
  return createPool(
    'observatory-read',
    opts,
    opts.max ?? READ_POOL_SIZE,
    // work_mem 32 MB: the search's bitmap scans (GIN AND B-tree) stay exact instead of lossy, which
    // took a capped count of a common word and a type from ~1.2 s to ~0.2 s on 5 M rows (bench/search).
    `-c TimeZone=UTC -c default_transaction_read_only=on -c statement_timeout=${READ_STATEMENT_TIMEOUT_MS} -c work_mem=${READ_WORK_MEM} -c max_parallel_workers_per_gather=${READ_PARALLEL_WORKERS}`,
    queryTimeoutMs(READ_STATEMENT_TIMEOUT_MS),
  );
}

function ms(value: number): number {
  if (!Number.isFinite(value) || value < 1)
    throw new RangeError(`timeout must be at least 1 ms (got ${value})`);
  return Math.round(value);
}

function createPool(
  name: PoolName,
  opts: PoolOptions,
  max: number,
  options: string,
  queryTimeout: number,
): pg.Pool {
  if (!Number.isInteger(max) || max < 1) throw new RangeError(`pool ${name}: max must be a positive integer`);
  const pool = new pg.Pool({
    ...connectionConfig(opts.url, options),
    max,
    connectionTimeoutMillis: opts.connectionTimeoutMs ?? CONNECTION_TIMEOUT_MS,
    idleTimeoutMillis: 60_000,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
    query_timeout: queryTimeout,
    application_name: name,
  });
  // A client that loses its server (database restart) must not crash the process. pg-pool listens
  // for that only while the client is idle; checked out, the client emits the error with no
  // listener (a throw) even when the statement in flight also fails with it. So every client gets
  // a listener of its own for its whole life: its statements still fail, and it is then discarded.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  if (opts.registry) registerPoolMetrics(opts.registry, name, pool, max);
  return pool;
}

interface Tracked {
  name: PoolName;
  pool: pg.Pool;
  max: number;
}

interface PoolMeters {
  pools: Tracked[];
  acquire: Timer<'pool'>;
  usage: Timer<'pool'>;
  timeouts: Counter<'pool'>;
}

const tracked = new WeakMap<Registry, PoolMeters>();

/**
 * Adds the pool to the registry's `pool_connections_*` meters, creating them on first use:
 * gauges `pool_connections_active`, `_idle`, `_pending`, `pool_connections`, `_max`, `_min`;
 * timers `pool_connections_acquire_seconds` (from `connect()`/`query()` asking for a connection
 * until it has one, failures included) and `pool_connections_usage_seconds` (from acquisition to
 * release), each with `_count`, `_sum` and `_max` (2-minute window); counter
 * `pool_connections_timeout_total` (acquisitions that hit the connection timeout). All tagged `pool`.
 *
 * The timers are the service kit's (`createTimer`): they wrap the pool's `connect` (which `query`
 * goes through) and listen to its `acquire` and `release` events, a stopwatch each per checkout.
 */
export function registerPoolMetrics(
  registry: Registry,
  name: PoolName,
  pool: DatabasePool,
  max: number,
): void {
  let meters = tracked.get(registry);
  if (!meters) {
    const pools: Tracked[] = [];
    const gauge = (metric: string, help: string, read: (t: Tracked) => number) =>
      new Gauge({
        name: metric,
        help,
        labelNames: ['pool'],
        registers: [registry],
        collect() {
          this.reset();
          for (const t of pools) this.set({ pool: t.name }, read(t));
        },
      });
    gauge('pool_connections_active', 'Connections in use', (t) => t.pool.totalCount - t.pool.idleCount);
    gauge('pool_connections_idle', 'Idle connections', (t) => t.pool.idleCount);
    gauge('pool_connections_pending', 'Callers waiting for a connection', (t) => t.pool.waitingCount);
    gauge('pool_connections', 'Open connections', (t) => t.pool.totalCount);
    gauge('pool_connections_max', 'Maximum connections', (t) => t.max);
    gauge('pool_connections_min', 'Minimum connections', () => 0);
    const timer = (name: string, help: string) =>
      createTimer<'pool'>(registry, { name, help, labelNames: ['pool'] });
    meters = {
      pools,
      acquire: timer('pool_connections_acquire_seconds', 'Wait for a pooled connection'),
      usage: timer('pool_connections_usage_seconds', 'Time a pooled connection is held'),
      timeouts: new Counter({
        name: 'pool_connections_timeout_total',
        help: 'Connection acquisitions that hit the connection timeout',
        labelNames: ['pool'],
        registers: [registry],
      }),
    };
    tracked.set(registry, meters);
  }
  meters.pools.push({ name, pool, max });
  instrument(meters, name, pool);
}

const STOP_USAGE = Symbol('pool_connections.stopUsage');
type Stamped = pg.PoolClient & { [STOP_USAGE]?: () => number };
type ConnectCallback = (
  err: Error | undefined,
  client?: pg.PoolClient,
  done?: (release?: unknown) => void,
) => void;

function instrument(meters: PoolMeters, name: PoolName, pool: pg.Pool): void {
  const labels = { pool: name };
  const timeouts = meters.timeouts.labels(labels);
  meters.acquire.zero(labels);
  meters.usage.zero(labels);
  timeouts.inc(0);

  pool.on('acquire', (client: Stamped) => {
    client[STOP_USAGE] = meters.usage.start(labels);
  });
  pool.on('release', (_err: unknown, client: Stamped) => {
    const stop = client[STOP_USAGE];
    client[STOP_USAGE] = undefined;
    stop?.();
  });

  // `query` calls `this.connect(callback)`, so this one wrapper times both entry points.
  const connect = pool.connect.bind(pool) as (cb: ConnectCallback) => void;
  const timed = (cb: ConnectCallback): void => {
    const stop = meters.acquire.start(labels);
    connect((err, client, done) => {
      stop();
      if (err && isAcquireTimeout(err)) timeouts.inc();
      cb(err, client, done);
    });
  };
  (pool as { connect: unknown }).connect = (cb?: ConnectCallback) => {
    if (cb) return timed(cb);
    return new Promise<pg.PoolClient>((resolve, reject) => {
      timed((err, client) => (err ? reject(err) : resolve(client!)));
    });
  };
}
