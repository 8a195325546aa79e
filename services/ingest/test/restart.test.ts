/**
 * Restarting the ingestion service under keep-alive load, with the service
 * as a real process (`src/main.ts`) on the suite's real Kafka: SIGTERM while 16 clients keep their
 * connections busy resets no request, every acknowledged event is in the topic exactly once, and a
 * body refused with 413 while the client is still sending it is read as the 413.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ServiceProcess, startServiceProcess } from '@event-observatory/devstack';
import { signDevToken } from '@event-observatory/service-kit/auth';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ceHeaders, createTopic, readRecords, SECRET, uniqueTopic } from './harness.js';

const MAX_EVENT_BYTES = 65_536;

/** How one request ended; `reset` is any transport failure but a refused connection. */
type Answer = number | 'refused' | 'reset';

interface Outcome {
  id: string;
  sentAt: number;
  answer: Answer;
  /** The answer's `connection` header. */
  connection?: string;
  detail?: string;
}

let dataDir: string;
let token: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'ingest-restart-'));
  token = await signDevToken({ secret: SECRET, scopes: ['events:write'] });
});

afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

function startIngest(topic: string, name: string): Promise<ServiceProcess> {
  return startServiceProcess({
    name: 'ingest',
    dataDir: mkdtempSync(join(dataDir, `${name}-`)),
    env: {
      BROKER_BOOTSTRAP_SERVERS: inject('kafka').bootstrapServers,
      BROKER_TOPIC: topic,
      AUTH_SECRET: SECRET,
      INGEST_MAX_EVENT_BYTES: String(MAX_EVENT_BYTES),
      OTEL_SDK_DISABLED: 'true',
      LOG_LEVEL: 'info',
    },
  });
}

async function send(agent: Agent, url: string, id: string): Promise<Outcome> {
  const sentAt = Date.now();
  try {
    const res = await request(`${url}/v1/events`, {
      method: 'POST',
      dispatcher: agent,
      headers: { authorization: `Bearer ${token}`, ...ceHeaders(id, new Date(sentAt).toISOString()) },
      body: `payload-${id}`,
    });
    await res.body.dump();
    return { id, sentAt, answer: res.statusCode, connection: res.headers.connection as string };
  } catch (err) {
    const code = (err as { code?: string }).code;
    return { id, sentAt, answer: code === 'ECONNREFUSED' ? 'refused' : 'reset', detail: code };
  }
}

describe('SIGTERM under keep-alive load', () => {
  it('resets no request, and every acknowledged event is in the topic exactly once', async () => {
    const topic = uniqueTopic('restart');
    await createTopic(inject('kafka').bootstrapServers, topic);
    const ingest = await startIngest(topic, 'load');
    const agent = new Agent({ connections: 16 });
    const outcomes: Outcome[] = [];
    let next = 0;
    let stop = false;
    // The producer's first send connects to the partition leaders: wait for it before the load.
    expect((await send(agent, ingest.url, `restart-${next++}`)).answer).toBe(200);
    // Then open the 16 connections: only requests on established connections are counted (a burst
    // of fresh connections on a loaded machine can draw resets, drain or not; see the README).
    await Promise.all(Array.from({ length: 16 }, () => send(agent, ingest.url, `restart-${next++}`)));
    const clients = Array.from({ length: 16 }, async () => {
      while (!stop) {
        const outcome = await send(agent, ingest.url, `restart-${next++}`);
        outcomes.push(outcome);
        // Nothing listens any more: no need to spin until the process is gone.
        if (outcome.answer === 'refused') await sleep(50);
      }
    });
    await sleep(2_000);
    const sigtermAt = Date.now();
    await ingest.stop();
    stop = true;
    await Promise.all(clients);
    await agent.close();

    const count = (answer: Answer) => outcomes.filter((o) => o.answer === answer).length;
    const resets = outcomes.filter((o) => o.answer === 'reset');
    console.log(
      `restart: ${outcomes.length} sent, ${count(200)} acked, ${count(503)} 503, ${count('refused')} refused, ` +
        `${resets.length} reset (${resets.filter((o) => o.sentAt < sigtermAt).length} sent before SIGTERM), ` +
        `${outcomes.filter((o) => o.connection === 'close').length} answered with connection: close`,
    );
    // Every request was sent before the process exited, so before its drain deadline.
    expect(resets.map((o) => o.detail)).toEqual([]);
    expect(outcomes.filter((o) => ![200, 503, 'refused'].includes(o.answer))).toEqual([]);
    // The requests in flight at SIGTERM were answered, telling their clients to close.
    expect(outcomes.filter((o) => o.answer === 200 && o.connection === 'close').length).toBeGreaterThan(0);
    expect(readFileSync(ingest.logFile, 'utf8')).toMatch(/"exitCode":0,"msg":"shutdown complete"/);

    const acked = new Set(outcomes.filter((o) => o.answer === 200).map((o) => o.id));
    const records = await readRecords(
      inject('kafka').bootstrapServers,
      topic,
      (rs) => rs.filter((r) => acked.has(r.headers.ce_id?.toString() ?? '')).length >= acked.size,
      60_000,
    );
    const copies = new Map<string, number>();
    for (const r of records) {
      const id = r.headers.ce_id?.toString() ?? '';
      copies.set(id, (copies.get(id) ?? 0) + 1);
    }
    expect([...acked].filter((id) => copies.get(id) !== 1)).toEqual([]);
    expect([...copies.values()].filter((n) => n > 1)).toEqual([]);
  });
});

describe('a body refused with 413 while the client is still sending it', () => {
  let ingest: ServiceProcess;
  beforeAll(async () => {
    const topic = uniqueTopic('restart-413');
    await createTopic(inject('kafka').bootstrapServers, topic);
    ingest = await startIngest(topic, 'too-large');
  });
  afterAll(async () => {
    await ingest?.stop();
  });

  it('is read as the 413 by undici, for a declared length and for a chunked body', async () => {
    const agent = new Agent({ connections: 8 });
    const big = Buffer.alloc(8 * 1024 * 1024, 'b');
    const chunked = async function* () {
      for (let i = 0; i < 128; i++) yield big.subarray(0, 64 * 1024);
    };
    const upload = (body: Buffer | Readable, i: number) =>
      request(`${ingest.url}/v1/events`, {
        method: 'POST',
        dispatcher: agent,
        headers: { authorization: `Bearer ${token}`, ...ceHeaders(`big-${i}`, new Date().toISOString()) },
        body,
      }).then(
        async (res) => {
          await res.body.dump();
          return res.statusCode;
        },
        (err: { code?: string }) => err.code ?? 'error',
      );
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => upload(i % 2 === 0 ? big : Readable.from(chunked()), i)),
    );
    await agent.close();
    console.log(
      `413: ${answers.filter((a) => a === 413).length} of 40 read, others: ${answers.filter((a) => a !== 413)}`,
    );
    expect(answers).toEqual(Array(40).fill(413));
  });
});
