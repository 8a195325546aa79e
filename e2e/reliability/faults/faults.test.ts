/**
 * The fault suite: each fault done to the real pipeline under a steady load of events
 * with unique ids, bounded in time, and ended by an exact reconciliation: every event answered 200
 * is stored exactly once, every other answer is a 503 or a refused connection (reported), none
 * hangs. `FAULT_SOAK=1` runs the long form. See ../README.md for the guarantees and the figures.
 */

import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { EVENT_TOPIC } from '@event-observatory/broker';
import { rawProducer } from '@event-observatory/devstack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LedgerRow } from '../lib/faults-ledger.js';
import { CONSUMER_STATEMENT_TIMEOUT_MS, HELD, type Pipeline, startPipeline } from '../lib/faults-pipeline.js';
import type { ServiceProcess } from '../lib/faults-process.js';
import { brokerFailures, expectExact, reportRows, SHED_FAILURES } from '../lib/faults-report.js';
import { INGEST_QUEUE_CAPACITY, PLAN, runFault } from '../lib/faults-run.js';
import { until } from '../lib/faults-wait.js';

const runId = randomUUID().slice(0, 8);
const POISON_RECORDS = 1_000;
// Well past the send queue (150 for the short form's 32 records), small enough that an overloaded
// machine still reads every request within the listener's header timeout (400 at once drew 408s
// at load average 20+ in the short form).
const QUEUE_BURST = Math.max(150, INGEST_QUEUE_CAPACITY * 1.5);
let p: Pipeline;
const rows: LedgerRow[] = [];
const startedAt = new Date().toISOString();

beforeAll(async () => {
  p = await startPipeline();
});

afterAll(async () => {
  reportRows({ rows, title: 'Fault suite', startedAt, path: process.env.FAULT_REPORT });
  await p?.close();
});

/**
 * Waits until the consumer met a store refusing writes with `sqlstate` (its log: waited out, not
 * dead-lettered) and its readiness says so (DOWN, `writes refused`, the SQLSTATE as the reason).
 */
async function writesRefused(sqlstate: string): Promise<void> {
  await until(
    `a write refused ${sqlstate}`,
    async () => readFileSync(p.consumer.logFile, 'utf8').includes(`"code":"${sqlstate}"`),
    30_000,
  );
  let said = 'nothing';
  await until(
    `readiness: writes refused ${sqlstate}`,
    async () => {
      const res = await fetch(`${p.consumer.url}/health/ready`);
      const body = (await res.json()) as Record<string, string>;
      said = `${res.status} ${JSON.stringify(body)}`;
      return (
        res.status === 503 &&
        body.database === 'writes refused' &&
        (body.databaseReason ?? '').startsWith(`SQLSTATE ${sqlstate}`)
      );
    },
    10_000,
  ).catch((error: Error) => {
    throw new Error(`${error.message}; readiness last said ${said}`);
  });
}

describe('the pipeline under faults, every acknowledged event stored exactly once', () => {
  it('survives kill -9 of the broker and its restart: sends fail as 503 meanwhile, none hangs', async () => {
    const { row } = await runFault(p, runId, {
      name: 'broker kill -9',
      begin: () => p.stack.kafka.kill(),
      holdMs: PLAN.outageMs,
      end: () => p.stack.kafka.start(),
    });
    expectExact(rows, row);
    expect(row.deadLettered).toBe(0);
    expect(row.unavailable).toBeGreaterThan(0);
  });

  it('survives kill -9 of the consumer between a batch write and its commit: the batch is redelivered and deduplicated', async () => {
    const { row } = await runFault(p, runId, {
      name: 'consumer kill -9',
      async begin() {
        await p.consumer.waitForLog(HELD, 30_000);
        await p.consumer.kill();
      },
      holdMs: 0,
      end: () => p.startConsumer(),
    });
    expectExact(rows, row);
    expect(row.deadLettered).toBe(0);
    // The restarted consumer wrote again what the killed one had written but not committed: the
    // store has no duplicate row because the redelivered records were absorbed (its meter).
    expect(row.duplicatesAbsorbed).toBeGreaterThan(0);
  });

  it('rebalances 1 -> 3 -> 1 consumers under load, one of them killed mid-batch: lost 0, stored once, lag back to 0', async () => {
    const extras: ServiceProcess[] = [];
    const { row } = await runFault(p, runId, {
      name: 'consumers 1-3-1',
      async begin() {
        extras.push(...(await Promise.all(['consumer-2', 'consumer-3'].map((n) => p.startExtraConsumer(n)))));
      },
      holdMs: PLAN.rebalanceMs,
      async end() {
        const [killed, stopped] = extras as [ServiceProcess, ServiceProcess];
        // Killed between a chunk's write and its commit, while the other two consume.
        await killed.waitForLog(HELD, 60_000);
        await killed.kill();
        await stopped.stop();
      },
    });
    expectExact(rows, row);
    expect(row.deadLettered).toBe(0);
    // The one consumer left owns every partition again and has caught up.
    await until(
      'lag 0 on every partition',
      async () => (await p.consumerMetric('consume_group_lag')) === 0,
      60_000,
    );
  });

  it('survives PostgreSQL stopped and started again: ingestion goes on, the consumer catches up', async () => {
    const { row } = await runFault(p, runId, {
      name: 'postgres stopped',
      begin: () => p.stack.postgres.stop(),
      holdMs: PLAN.postgresOutageMs,
      end: () => p.stack.postgres.start(),
    });
    expectExact(rows, row);
    // An outage is waited out, never dead-lettered; the broker was untouched, so no send failed
    // (a full queue is this loaded machine's, not the database's).
    expect(row.deadLettered).toBe(0);
    expect(brokerFailures(row)).toEqual([]);
  });

  it('waits out a read-only primary (SQLSTATE 25006, as after a failover) and resumes: nothing lost', async () => {
    // `default_transaction_read_only` for every session, as a demoted primary or a standby
    // answers writes; the consumer must wait and retry, never dead-letter.
    const readOnly = async (on: boolean) => {
      const client = await p.db.connect();
      try {
        // sql-witness: injects the store's faults (read-only, full disk, slow trigger) as an operator would.
        await client.query('SET default_transaction_read_only = off'); // this session may write
        await client.query(
          on
            ? 'ALTER SYSTEM SET default_transaction_read_only = on'
            : 'ALTER SYSTEM RESET default_transaction_read_only',
        );
        await client.query('SELECT pg_reload_conf()');
      } finally {
        client.release();
      }
    };
    const { row } = await runFault(p, runId, {
      name: 'postgres read-only',
      async begin() {
        await readOnly(true);
        await writesRefused('25006');
      },
      holdMs: PLAN.postgresOutageMs,
      end: () => readOnly(false),
    });
    expectExact(rows, row);
    expect(row.deadLettered).toBe(0);
    expect(brokerFailures(row)).toEqual([]);
  });

  // A small filesystem for the current month's partition: root mounts a tmpfs (skipped otherwise).
  it.skipIf(process.getuid?.() !== 0)(
    'waits out a full disk (SQLSTATE 53100) and resumes once space is freed: nothing lost',
    async () => {
      const dir = join(p.dataDir, 'small-disk');
      const filler = join(dir, 'filler');
      const now = new Date();
      const partition = `events.cloud_event_${now.getUTCFullYear()}_${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
      mkdirSync(dir, { recursive: true });
      // Room for the partition as it is (the soak's earlier faults leave hundreds of MiB in it) and
      // for what the load adds before the fault begins; the filler takes the rest.
      const { rows: sized } = await p.db.query<{ mib: string }>(
        `SELECT ceil(pg_total_relation_size('${partition}') / 1048576.0) AS mib`,
      );
      const size = `${Number(sized[0]?.mib ?? 0) + 256}m`;
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]);
      try {
        execFileSync('chown', ['postgres:postgres', dir]);
        await p.db.query(`CREATE TABLESPACE faults_small LOCATION '${dir}'`);
        await p.db.query(`ALTER TABLE ${partition} SET TABLESPACE faults_small`);
        const { row } = await runFault(p, runId, {
          name: 'disk full',
          async begin() {
            // Fill what is left: the partition's next page cannot be written.
            spawnSync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=1M'], { stdio: 'ignore' });
            await writesRefused('53100');
          },
          holdMs: PLAN.postgresOutageMs,
          end: async () => rmSync(filler, { force: true }),
        });
        expectExact(rows, row);
        expect(row.deadLettered).toBe(0);
        expect(brokerFailures(row)).toEqual([]);
      } finally {
        rmSync(filler, { force: true });
        await p.db.query(`ALTER TABLE ${partition} SET TABLESPACE pg_default`).catch(() => {});
        await p.db.query('DROP TABLESPACE IF EXISTS faults_small').catch(() => {});
        execFileSync('umount', [dir]);
      }
    },
  );

  it('the database path goes silent (packets dropped, nothing closed): the stuck write ends within its bound and is retried', async () => {
    const { row } = await runFault(p, runId, {
      name: 'database path silent',
      async begin() {
        await p.consumer.waitForLog(HELD, 30_000); // a write is under way on the path
        p.databasePath.freeze();
      },
      holdMs: 0,
      end: async () => {},
    });
    expectExact(rows, row);
    expect(row.deadLettered).toBe(0);
    // The write pool's client-side bound (twice the statement timeout) plus the retry's backoff
    // and a loaded machine's slack, far below TCP's ~15 minutes of retransmissions.
    expect(row.recoverMs).toBeLessThan(2 * CONSUMER_STATEMENT_TIMEOUT_MS + 20_000);
  });

  it('restarts the ingestion service with requests in flight: each finishes or gets 503, none hangs', async () => {
    let inFlight: Promise<void> | undefined;
    let exit: number | string | undefined;
    const { row } = await runFault(p, runId, {
      name: 'ingest restart',
      async begin(load) {
        inFlight = load.burst(100);
        await sleep(20);
        await p.ingest.stop();
        exit = await p.ingest.exited();
      },
      holdMs: 0,
      end: () => p.startIngest(),
    });
    await inFlight;
    // The drain closes no idle connection, but on this loaded machine a keep-alive connection
    // expires (server side) as the client reuses it, drain or not: that request is reset before
    // it is read (the README's "not guaranteed"), never published, so never stored.
    expectExact(rows, row);
    expect(row.resetStored).toBe(0);
    expect(row.deadLettered).toBe(0);
    expect(exit).toBe(0);
  });

  // Ingest's event limit never exceeds the send queue, so the overflow is mostly refused by it
  // (`overloaded`, before the body is read) and the queue's own `queue-full` stays a backstop.
  it('fills the send queue: the overflow is refused 503 overloaded or queue-full at once, the rest stored', async () => {
    const shed = (o: { failure?: string | undefined }) => SHED_FAILURES.has(o.failure ?? '');
    const { row, load } = await runFault(p, runId, {
      name: 'send queue full',
      // Bursts until one is refused (a fast machine drains a single burst in time).
      async begin(load) {
        for (let i = 0; i < 5 && !load.outcomes.some(shed); i++) {
          await load.burst(QUEUE_BURST);
        }
      },
      holdMs: 0,
      end: async () => {},
    });
    expectExact(rows, row);
    expect(row.deadLettered).toBe(0);
    expect(load.outcomes.filter(shed).length).toBeGreaterThan(0);
  });

  it('keeps consuming through a slow database (every insert delayed 0.5 s by a trigger)', async () => {
    const { row } = await runFault(p, runId, {
      name: 'slow database',
      async begin() {
        await p.db.query(`
          CREATE FUNCTION public.faults_slow() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN PERFORM pg_sleep(0.5); RETURN NULL; END $$;
          CREATE TRIGGER faults_slow BEFORE INSERT ON events.cloud_event
            FOR EACH STATEMENT EXECUTE FUNCTION public.faults_slow();`);
      },
      holdMs: PLAN.slowMs,
      async end() {
        await p.db.query(
          'DROP TRIGGER faults_slow ON events.cloud_event; DROP FUNCTION public.faults_slow();',
        );
      },
    });
    expectExact(rows, row);
    expect(row.deadLettered).toBe(0);
    expect(brokerFailures(row)).toEqual([]);
  });

  it('dead-letters a storm of 1,000 undecodable records while good traffic is stored', async () => {
    const producer = await rawProducer(p.stack.bootstrapServers, {}, { clientId: 'faults-poison' });
    const [dlqBefore, poisonBefore] = [
      await p.deadLetters(),
      await p.consumerMetric('consume_records_poison_total'),
    ];
    try {
      const { row } = await runFault(p, runId, {
        name: 'poison storm',
        async begin() {
          for (let batch = 0; batch < POISON_RECORDS / 100; batch++) {
            await producer.send({
              topic: EVENT_TOPIC,
              acks: -1,
              messages: Array.from({ length: 100 }, (_, i) => ({
                key: `poison-${batch * 100 + i}`,
                value: Buffer.from([0xff, 0xfe, batch, i]),
              })),
            });
          }
        },
        holdMs: 0,
        // The storm is over once the consumer has dead-lettered all of it.
        end: () =>
          until(
            '1,000 dead letters',
            async () => (await p.deadLetters()) - dlqBefore >= POISON_RECORDS,
            60_000,
          ),
      });
      expectExact(rows, row);
      expect(row.deadLettered).toBe(POISON_RECORDS);
      expect((await p.consumerMetric('consume_records_poison_total')) - poisonBefore).toBe(POISON_RECORDS);
    } finally {
      await producer.disconnect();
    }
  });
});
