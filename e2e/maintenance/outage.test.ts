/**
 * A partition-maintenance outage end to end: events for a month without a partition travel through
 * Kafka and the consumer into the default partition (nothing dead-lettered), the job reports the
 * month blocked with its statements and the consumer's /metrics shows it (the jobs' meters are
 * exported from events.maintenance_run), the statements run as logged move every row once, and the
 * month then receives new events itself.
 */
import { randomUUID } from 'node:crypto';
import { type CloudEvent, toKafkaRecord } from '@event-observatory/events';
import { createJobsService, readJobsConfig } from '@event-observatory/jobs';
import { createLogger } from '@event-observatory/service-kit';
import { addMonths, monthPartitionName } from '@event-observatory/store';
import type { Producer } from 'kafkajs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createPipelineTopics,
  createSuiteDatabase,
  type StartedConsumer,
  startConsumer,
  testKafka,
} from '../support/services.js';

const id = randomUUID().slice(0, 8);
const topic = `e2e.maintenance.${id}`;
const source = `urn:e2e:${id}:outage`;
// This month, whose partition the suite drops (the migration created it), as when maintenance has
// not run for months: its events, inside every time window, fall into the default partition.
const now = Date.now();
const month = addMonths(new Date(now), 0);
let closers: (() => Promise<unknown>)[] = [];
let producer: Producer;
let db: pg.Pool;
let consumer: StartedConsumer;
let databaseUrl: string;

beforeAll(async () => {
  await createPipelineTopics(topic);
  databaseUrl = await createSuiteDatabase(`e2e_maintenance_${id}`);
  consumer = await startConsumer({ topic, databaseUrl, group: `e2e-${id}` });
  closers.push(() => consumer.close());
  producer = testKafka().producer({ allowAutoTopicCreation: false });
  await producer.connect();
  closers.unshift(() => producer.disconnect());
  db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  closers.push(() => db.end());
  // The consumer applied the migrations, which created this month's partition.
  await db.query(`DROP TABLE events.${monthPartitionName(month)}`);
});

afterAll(async () => {
  for (const close of closers) await close().catch(() => {});
  closers = [];
});

function event(n: number): CloudEvent {
  return {
    specversion: '1.0',
    id: `outage-${n}`,
    source,
    type: 'com.example.e2e.reading',
    time: new Date(Math.max(month.getTime(), now - n * 1_000)).toISOString(),
    extensions: {},
    datacontenttype: 'application/json',
    data: Buffer.from(JSON.stringify({ n })),
  };
}

async function publish(events: CloudEvent[]): Promise<void> {
  await producer.send({ topic, acks: -1, messages: events.map(toKafkaRecord) });
}

/** The sum of a meter's series on the consumer's /metrics. */
async function metric(name: string): Promise<number> {
  const res = await fetch(`${consumer.metricsUrl}/metrics`);
  const text = await res.text();
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > 60_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const rows = async (where = 'true') =>
  // sql-witness: counts what the pipeline stored across the outage, in its own SQL.
  (
    await db.query(`SELECT count(*)::int AS n FROM events.cloud_event WHERE ce_source = $1 AND ${where}`, [
      source,
    ])
  ).rows[0].n as number;

describe('partition-maintenance outage, through Kafka and the consumer', () => {
  it('stores the missing month in the default partition, reports it blocked, and the logged statements move it', async () => {
    await publish(Array.from({ length: 30 }, (_, n) => event(n)));
    await until('30 rows', async () => (await rows()) === 30);
    expect(await rows(`tableoid = 'events.cloud_event_default'::regclass`)).toBe(30);
    await until('partition_default_rows 30', async () => (await metric('partition_default_rows')) === 30);
    expect(await metric('consume_records_poison_total')).toBe(0);

    const lines: Record<string, unknown>[] = [];
    const jobs = createJobsService({
      config: readJobsConfig({}),
      databaseUrl,
      logger: createLogger({
        service: 'jobs',
        destination: { write: (line: string) => lines.push(JSON.parse(line)) },
      }),
      clock: () => new Date(month.getTime() + 86_400_000),
    });
    closers.unshift(() => jobs.close());
    expect(await jobs.run('partition-maintenance')).toMatchObject({
      outcome: 'success',
      partitionsBlocked: 1,
    });
    expect(await metric('maintenance_partitions_blocked')).toBe(1);
    const blocked = lines.find((l) => l.partition === monthPartitionName(month));
    expect(blocked).toMatchObject({ level: 'warn', defaultRows: 30 });

    await db.query(blocked?.statements as string);
    expect(await rows(`tableoid = 'events.${monthPartitionName(month)}'::regclass`)).toBe(30);
    expect((await db.query('SELECT count(*)::int AS n FROM events.cloud_event_default')).rows[0].n).toBe(0);
    await until('partition_default_rows 0', async () => (await metric('partition_default_rows')) === 0);

    // The consumer keeps writing that month, now into its partition; every event once.
    await publish([event(30), event(0)]);
    await until('31 rows', async () => (await rows()) === 31);
    expect(await rows(`tableoid = 'events.${monthPartitionName(month)}'::regclass`)).toBe(31);
    expect(await jobs.run('partition-maintenance')).toMatchObject({
      outcome: 'success',
      partitionsBlocked: 0,
    });
    expect(await metric('maintenance_partitions_blocked')).toBe(0);
    expect(await metric('consume_records_poison_total')).toBe(0);
  });
});
