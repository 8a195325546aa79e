/**
 * The two connection pools of the store and their `pool_connections_*` gauges.
 *
 * - `observatory-write` (consumer, jobs): 6 connections.
 * - `observatory-read` (search): 8 connections, read-only sessions, server-side statement timeout
 *   2 s. Both: connection timeout 3 s, sessions in UTC.
 *
 * @example
 * const pool = createWritePool({ url, registry });
 * await pool.query('select 1');
 */
import pg from 'pg';
import { Gauge, type Registry } from 'prom-client';

export type PoolName = 'observatory-write' | 'observatory-read';

export interface PoolOptions {
  url: string;
  /** Registers the pool's gauges (label `pool`) in this registry. */
  registry?: Registry;
  /** Overrides the default size (6 for write, 8 for read). */
  max?: number;
  connectionTimeoutMs?: number;
}

export const WRITE_POOL_SIZE = 6;
export const READ_POOL_SIZE = 8;
export const CONNECTION_TIMEOUT_MS = 3_000;
export const READ_STATEMENT_TIMEOUT_MS = 2_000;

/** Pool of the writers: UTC sessions, 6 connections, 3 s connection timeout. */
export function createWritePool(opts: PoolOptions): pg.Pool {
  return createPool('observatory-write', opts, opts.max ?? WRITE_POOL_SIZE, '-c TimeZone=UTC');
}

/** Pool of the readers: UTC, read-only, statement timeout 2 s, 8 connections. */
export function createReadPool(opts: PoolOptions): pg.Pool {
  return createPool(
    'observatory-read',
    opts,
    opts.max ?? READ_POOL_SIZE,
    `-c TimeZone=UTC -c default_transaction_read_only=on -c statement_timeout=${READ_STATEMENT_TIMEOUT_MS}`,
  );
}

function createPool(name: PoolName, opts: PoolOptions, max: number, options: string): pg.Pool {
  if (!Number.isInteger(max) || max < 1) throw new RangeError(`pool ${name}: max must be a positive integer`);
  const pool = new pg.Pool({
    connectionString: opts.url,
    max,
    connectionTimeoutMillis: opts.connectionTimeoutMs ?? CONNECTION_TIMEOUT_MS,
    idleTimeoutMillis: 60_000,
    application_name: name,
    options,
  });
  // An idle client that loses its server (database restart) must not crash the process.
  pool.on('error', () => {});
  if (opts.registry) registerPoolMetrics(opts.registry, name, pool, max);
  return pool;
}

interface Tracked {
  name: PoolName;
  pool: pg.Pool;
  max: number;
}

const tracked = new WeakMap<Registry, Tracked[]>();

/** Adds the pool to the registry's `pool_connections_*` gauges, creating them on first use. */
export function registerPoolMetrics(registry: Registry, name: PoolName, pool: pg.Pool, max: number): void {
  let list = tracked.get(registry);
  if (!list) {
    const pools: Tracked[] = [];
    list = pools;
    tracked.set(registry, pools);
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
  }
  list.push({ name, pool, max });
}
