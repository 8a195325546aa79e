/**
 * The pools' timers and timeout counter, and the severity trim rule against the SQL function.
 */
import { createDatabase } from '@event-observatory/devstack';
import { Registry } from 'prom-client';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { isAcquireTimeout } from '../src/errors.js';
import { createReadPool, createWritePool, migrate, severityRank } from '../src/index.js';

let url: string;

beforeAll(async () => {
  url = await createDatabase(inject('stack').databaseUrl, `store_pm_${Date.now().toString(36)}`);
  await migrate({ url });
});

function sample(text: string, line: string): number | undefined {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(found.lastIndexOf(' ') + 1));
}

describe('pool_connections_* timers', () => {
  it('time each acquisition and each checkout, for query() and connect() alike', async () => {
    const registry = new Registry();
    const write = createWritePool({ url, registry });
    const read = createReadPool({ url, registry });
    try {
      await write.query('SELECT 1');
      const client = await write.connect();
      await client.query('SELECT pg_sleep(0.2)');
      client.release();
      await new Promise<void>((resolve, reject) =>
        write.connect((err, c, done) => {
          if (err) return reject(err);
          c!.query('SELECT 1').then(() => {
            done!();
            resolve();
          }, reject);
        }),
      );
      const text = await registry.metrics();
      const w = 'pool="observatory-write"';
      expect(sample(text, `pool_connections_acquire_seconds_count{${w}}`)).toBe(3);
      expect(sample(text, `pool_connections_usage_seconds_count{${w}}`)).toBe(3);
      expect(sample(text, `pool_connections_usage_seconds_sum{${w}}`)).toBeGreaterThanOrEqual(0.2);
      expect(sample(text, `pool_connections_usage_seconds_max{${w}}`)).toBeGreaterThanOrEqual(0.2);
      expect(sample(text, `pool_connections_acquire_seconds_max{${w}}`)).toBeGreaterThan(0);
      expect(sample(text, `pool_connections_timeout_total{${w}}`)).toBe(0);
      expect(sample(text, 'pool_connections_timeout_total{pool="observatory-read"}')).toBe(0);
      expect(text).toContain('# TYPE pool_connections_acquire_seconds summary');
    } finally {
      await Promise.all([write.end(), read.end()]);
    }
  });

  it('publish their series with the same names, help and types, the window max at zero before the first checkout', async () => {
    const registry = new Registry();
    const pool = createWritePool({ url, registry });
    try {
      const text = await registry.metrics();
      const w = 'pool="observatory-write"';
      for (const [name, help] of [
        ['pool_connections_acquire_seconds', 'Wait for a pooled connection'],
        ['pool_connections_usage_seconds', 'Time a pooled connection is held'],
      ]) {
        expect(text).toContain(`# HELP ${name} ${help}\n# TYPE ${name} summary\n`);
        expect(text).toContain(
          `# HELP ${name}_max ${help} (maximum over the last 2 minutes)\n# TYPE ${name}_max gauge\n`,
        );
        expect(sample(text, `${name}_max{${w}}`)).toBe(0);
      }
    } finally {
      await pool.end();
    }
  });

  it('count an acquisition that hits the connection timeout', async () => {
    const registry = new Registry();
    const pool = createWritePool({ url, registry, max: 1, connectionTimeoutMs: 200 });
    try {
      const held = await pool.connect();
      const err = await pool.query('SELECT 1').catch((e: unknown) => e);
      expect(isAcquireTimeout(err)).toBe(true);
      held.release();
      const text = await registry.metrics();
      expect(sample(text, 'pool_connections_timeout_total{pool="observatory-write"}')).toBe(1);
      expect(sample(text, 'pool_connections_acquire_seconds_count{pool="observatory-write"}')).toBe(2);
      expect(
        sample(text, 'pool_connections_acquire_seconds_max{pool="observatory-write"}'),
      ).toBeGreaterThanOrEqual(0.19);
    } finally {
      await pool.end();
    }
  });
});

describe('severity names', () => {
  it('are trimmed of spaces only, in TypeScript as in events.severity_rank', async () => {
    const pool = createWritePool({ url });
    try {
      const names = [' error ', '\terror', 'error\n', '\tWARN\t', ' Fatal'];
      const { rows } = await pool.query<{ name: string; rank: number | null }>(
        'SELECT n AS name, events.severity_rank(n) AS rank FROM unnest($1::text[]) AS n',
        [names],
      );
      expect(rows.map((r) => [r.name, r.rank])).toEqual(names.map((n) => [n, severityRank(n) ?? null]));
      expect(rows.map((r) => r.rank)).toEqual([50, null, null, null, 60]);
    } finally {
      await pool.end();
    }
  });
});
