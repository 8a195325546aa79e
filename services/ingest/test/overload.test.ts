/**
 * Overload: the service as its own process (`src/main.ts`, default limits, its production node
 * flags) under a flood of concurrent 1 MiB events, far more bytes at once than its in-flight
 * budget. It must shed the excess with the spec's 503 before processing it, keep its memory far
 * below the offered bytes, and have published every event it answered 200 (and none it refused).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ServiceProcess, startServiceProcess } from '@event-observatory/devstack';
import { signDevToken } from '@event-observatory/service-kit/auth';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ceHeaders, createTopic, readRecords, SECRET, uniqueTopic } from './harness.js';

const FLOOD = 256;
const EVENT_BYTES = 1_000_000;
/** The default `INGEST_MAX_INFLIGHT_BYTES`. */
const BUDGET_MIB = 16;

function rssMiB(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) / 1024;
}

interface Answer {
  status: number;
  retryAfter: string | undefined;
  body: { error?: { status: string; details: { reason: string; metadata: Record<string, string> }[] } };
}

/** One binary-mode POST on its own connection (node:http reads an early answer while it still sends). */
function post(url: string, headers: Record<string, string>, body: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}/v1/events`,
      { method: 'POST', headers: { ...headers, 'content-length': String(body.byteLength) }, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            retryAfter: res.headers['retry-after'],
            body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('overload: the in-flight byte budget', () => {
  const { bootstrapServers } = inject('kafka');
  const topic = uniqueTopic('ingest-overload');
  const dataDir = mkdtempSync(join(tmpdir(), 'ingest-overload-'));
  let service: ServiceProcess;

  beforeAll(async () => {
    await createTopic(bootstrapServers, topic, 3);
    service = await startServiceProcess({
      name: 'ingest',
      dataDir,
      env: {
        BROKER_BOOTSTRAP_SERVERS: bootstrapServers,
        BROKER_TOPIC: topic,
        AUTH_SECRET: SECRET,
        LOG_LEVEL: 'warn',
        OTEL_SDK_DISABLED: 'true',
      },
    });
  }, 180_000);
  afterAll(async () => {
    await service?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('sheds a flood of 1 MiB events with 503 overloaded and retry-after, keeps its memory far below the offered bytes, and publishes exactly the events it accepted', async () => {
    const token = await signDevToken({ secret: SECRET, scopes: ['events:write'] });
    const payload = Buffer.alloc(EVENT_BYTES, 0x61);
    const pid = service.pid()!;
    // Warm: one accepted event, so the producer is connected and the code paths are compiled.
    const time = new Date().toISOString();
    const headers = (id: string) => ({
      authorization: `Bearer ${token}`,
      'content-type': 'application/octet-stream',
      ...ceHeaders(id, time),
    });
    expect((await post(service.url, headers('warm'), payload)).status).toBe(200);
    const before = rssMiB(pid);
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssMiB(pid));
    }, 20);
    const ids = Array.from({ length: FLOOD }, (_, i) => `flood-${i}`);
    const answers = await Promise.all(ids.map((id) => post(service.url, headers(id), payload)));
    clearInterval(sampler);

    const accepted = ids.filter((_, i) => answers[i]!.status === 200);
    const refused = answers.filter((a) => a.status === 503);
    expect(accepted.length + refused.length, 'every answer is 200 or 503').toBe(FLOOD);
    expect(accepted.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    for (const a of refused) {
      expect(a.retryAfter).toBe('1');
      expect(a.body.error).toMatchObject({
        status: 'UNAVAILABLE',
        details: [{ reason: 'unpersistable', metadata: { failure: 'overloaded' } }],
      });
    }
    // 256 MB were offered at once. With the budget out of the way the service's memory rose
    // 266-275 MiB (it held every body); with it, 98-153 MiB (9 runs on 2026-11-24, an idle
    // machine), of which the budget's own share is small: with the budget at one request the
    // rise was 101-151 MiB. The rest is the refused requests' bodies, which the server must read
    // and drop to deliver their 503 (services/ingest/README.md, "Overload"): garbage the runtime
    // collects late. So the bound sits between the two: memory that followed the offered bytes
    // fails it, the noise of the collector does not.
    expect(peak - before, `RSS ${before.toFixed(0)} -> peak ${peak.toFixed(0)} MiB`).toBeLessThan(
      12 * BUDGET_MIB,
    );

    const records = await readRecords(
      bootstrapServers,
      topic,
      (rs) => rs.length >= accepted.length + 1,
      60_000,
    );
    await new Promise((r) => setTimeout(r, 500));
    const onTopic = records.map((r) => r.headers.ce_id?.toString()).filter((id) => id !== 'warm');
    expect(onTopic.sort()).toEqual([...accepted].sort());
    expect(records.every((r) => r.value?.byteLength === EVENT_BYTES)).toBe(true);
  }, 180_000);
});
