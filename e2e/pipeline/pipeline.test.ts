/**
 * Ingest -> Kafka -> consumer -> PostgreSQL: N accepted events, some sent twice and in both content
 * modes, give exactly N rows whose `raw` is the event that was sent and whose `producer` names the
 * token that sent it.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createPipelineTopics,
  createSuiteDatabase,
  type StartedConsumer,
  startConsumer,
  startIngest,
} from '../support/services.js';

const SECRET = 'e2e-pipeline-secret-0123456789abcdef';
const id = randomUUID().slice(0, 8);
const topic = `e2e.pipeline.${id}`;
let closers: (() => Promise<unknown>)[] = [];
let ingestUrl: string;
let token: string;
let db: pg.Pool;
let consumer: StartedConsumer;

beforeAll(async () => {
  await createPipelineTopics(topic);
  const databaseUrl = await createSuiteDatabase(`e2e_pipeline_${id}`);
  consumer = await startConsumer({ topic, databaseUrl, group: `e2e-${id}` });
  closers.push(() => consumer.close());
  const ingest = await startIngest({ topic, secret: SECRET, knownTypes: ['com.example.*'] });
  closers.unshift(() => ingest.close());
  ({ url: ingestUrl, token } = ingest);
  db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  closers.push(() => db.end());
});

afterAll(async () => {
  for (const close of closers) await close().catch(() => {});
  closers = [];
});

interface Sent {
  id: string;
  source: string;
  /** The event as the JSON event format renders what was sent. */
  expected: Record<string, unknown>;
}

const time = () => new Date(Date.now() - 5_000).toISOString();

async function sendBinary(i: number): Promise<Sent> {
  const e = {
    id: `bin-${i}`,
    source: `urn:e2e:${id}:binary`,
    type: 'com.example.e2e.reading',
    time: time(),
    subject: `sensor-${i % 3}`,
    data: { i, deviceId: `dev-${i % 4}`, note: `binary ${i}` },
  };
  const res = await fetch(`${ingestUrl}/v1/events`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      'ce-specversion': '1.0',
      'ce-id': e.id,
      'ce-source': e.source,
      'ce-type': e.type,
      'ce-time': e.time,
      'ce-subject': e.subject,
      'ce-severity': 'warning',
    },
    body: JSON.stringify(e.data),
  });
  expect(res.status).toBe(200);
  return {
    id: e.id,
    source: e.source,
    expected: {
      specversion: '1.0',
      id: e.id,
      source: e.source,
      type: e.type,
      time: e.time,
      subject: e.subject,
      datacontenttype: 'application/json',
      severity: 'warning',
      data: e.data,
    },
  };
}

async function sendStructured(i: number): Promise<Sent> {
  const doc = {
    specversion: '1.0',
    id: `str-${i}`,
    source: `urn:e2e:${id}:structured`,
    type: 'com.example.e2e.alarm',
    time: time(),
    datacontenttype: 'application/json',
    tags: 'e2e,structured',
    data: { i, level: 'error', nested: { ok: true, list: [1, 2, 3] } },
  };
  const res = await fetch(`${ingestUrl}/v1/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/cloudevents+json' },
    body: JSON.stringify(doc),
  });
  expect(res.status).toBe(200);
  return { id: doc.id, source: doc.source, expected: doc };
}

describe('pipeline: ingest -> broker -> consumer -> store', () => {
  it('stores exactly the unique accepted events, raw equal to what was sent, when some are sent twice', async () => {
    const sent: Sent[] = [];
    for (let i = 0; i < 30; i++) sent.push(await sendBinary(i));
    for (let i = 0; i < 30; i++) sent.push(await sendStructured(i));
    // Send every fifth event again (same id, source and time): accepted again, stored once.
    let resent = 0;
    for (let i = 0; i < 30; i += 5) {
      const again = sent.find((s) => s.id === `str-${i}`)!;
      const res = await fetch(`${ingestUrl}/v1/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/cloudevents+json' },
        body: JSON.stringify(again.expected),
      });
      expect(res.status).toBe(200);
      resent++;
    }
    const where = `ce_source LIKE 'urn:e2e:${id}:%'`;
    const count = async () =>
      // sql-witness: reads what the pipeline stored, in its own SQL.
      (await db.query(`SELECT count(*)::int AS n FROM events.cloud_event WHERE ${where}`)).rows[0].n;
    const started = Date.now();
    while ((await count()) < sent.length && Date.now() - started < 60_000)
      await new Promise((r) => setTimeout(r, 200));
    // Wait for the duplicates to be processed too, then check nothing more arrived.
    const dupStarted = Date.now();
    const duplicates = async () => {
      const text = await (await fetch(`${consumer.metricsUrl}/metrics`)).text();
      const line = text.split('\n').find((l) => l.startsWith('consume_records_duplicate_total'));
      return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
    };
    while ((await duplicates()) < resent && Date.now() - dupStarted < 30_000)
      await new Promise((r) => setTimeout(r, 200));
    expect(await duplicates()).toBe(resent);
    expect(await count()).toBe(sent.length);

    const { rows } = await db.query(
      `SELECT ce_source, ce_id, raw, severity_rank, tags, producer FROM events.cloud_event WHERE ${where}`,
    );
    const byKey = new Map(rows.map((r) => [`${r.ce_source} ${r.ce_id}`, r]));
    for (const s of sent) {
      const row = byKey.get(`${s.source} ${s.id}`);
      expect(row, `${s.id} stored`).toBeDefined();
      expect(row.raw).toEqual(s.expected);
      // The dev token's subject, beside the event and not in it.
      expect(row.producer).toEqual({ authtype: 'unknown', authid: 'dev' });
    }
    expect(byKey.get(`urn:e2e:${id}:binary bin-1`).severity_rank).toBe(40);
    expect(byKey.get(`urn:e2e:${id}:structured str-1`)).toMatchObject({
      severity_rank: 50,
      tags: ['e2e', 'structured'],
    });
  });
});
