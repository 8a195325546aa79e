/**
 * The API, not the broker, refuses an oversized event. On a topic whose
 * `max.message.bytes` cannot hold an event at `INGEST_MAX_EVENT_BYTES` (created by someone else,
 * with Kafka's default 1048588 bytes), the service refuses to start, or reports not ready when the
 * topic changes under it.
 */
import { rmSync } from 'node:fs';
import { eventTopicSpec, RECORD_OVERHEAD_BYTES, type TopicSpec } from '@event-observatory/broker';
import { ensureStackTopics, runServiceProcess, tempDataDir } from '@event-observatory/devstack';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ceHeaders, type Harness, startHarness, uniqueTopic, waitFor } from './harness.js';

const { bootstrapServers } = inject('kafka');
const KAFKA_DEFAULT_LIMIT = 1_048_588;

/** The event topic's spec with another `max.message.bytes`, as someone else might have set it. */
function topicWithLimit(name: string, maxMessageBytes: number): TopicSpec {
  const spec = eventTopicSpec(name);
  return {
    ...spec,
    partitions: 3,
    configs: { ...spec.configs, 'max.message.bytes': String(maxMessageBytes) },
  };
}

/** Runs the service's real entry point, with nothing inherited but PATH, until it exits (killed after `timeoutMs`). */
async function runMain(env: Record<string, string>, timeoutMs: number) {
  const dataDir = tempDataDir('ingest-max-event-bytes');
  const run = await runServiceProcess(
    { name: 'ingest', env, baseEnv: { PATH: process.env.PATH }, dataDir },
    timeoutMs,
  );
  rmSync(dataDir, { recursive: true, force: true });
  return run;
}

describe('INGEST_MAX_EVENT_BYTES against the topic limit', () => {
  const small = uniqueTopic('ingest-small-limit');

  beforeAll(async () => {
    await ensureStackTopics(bootstrapServers, [topicWithLimit(small, KAFKA_DEFAULT_LIMIT)]);
  });

  it("refuses to start with one line naming both numbers and both settings on a topic with Kafka's default limit", async () => {
    const { code, stderr } = await runMain(
      {
        BROKER_BOOTSTRAP_SERVERS: bootstrapServers,
        BROKER_TOPIC: small,
        AUTH_ENABLED: 'false',
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: '0',
        OTEL_SDK_DISABLED: 'true',
        LOG_LEVEL: 'error',
      },
      60_000,
    );
    expect(code).toBe(1);
    const lines = stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^configuration error: INGEST_MAX_EVENT_BYTES: 1048576 does not fit topic .*max\.message\.bytes is 1048588/,
    );
    expect(lines[0]).toContain(`at most ${KAFKA_DEFAULT_LIMIT - RECORD_OVERHEAD_BYTES}`);
    expect(lines[0]).toContain(`at least ${1_048_576 + RECORD_OVERHEAD_BYTES}`);
  }, 90_000);

  it('starts on that topic with a ceiling that fits, and the broker takes an event at the ceiling with a full HTTP head', async () => {
    const ceiling = KAFKA_DEFAULT_LIMIT - RECORD_OVERHEAD_BYTES;
    const h = await startHarness({ bootstrapServers, topic: small, limits: { maxEventBytes: ceiling } });
    try {
      expect(await (await fetch(`${h.url}/health/ready`)).json()).toMatchObject({ eventCeiling: 'fits' });
      // Source and subject of 7,000 characters each: the key repeats both, the headers carry both,
      // and the HTTP head stays under Node's 16 KiB.
      const headers = ceHeaders('at-ceiling', new Date().toISOString(), {
        'ce-source': `urn:${'s'.repeat(7_000)}`,
        'ce-subject': 'x'.repeat(7_000),
        authorization: `Bearer ${h.token}`,
      });
      const atCeiling = await fetch(`${h.url}/v1/events`, {
        method: 'POST',
        headers,
        body: Buffer.alloc(ceiling, 0x61),
      });
      expect(atCeiling.status).toBe(200);
      const over = await fetch(`${h.url}/v1/events`, {
        method: 'POST',
        headers,
        body: Buffer.alloc(ceiling + 1, 0x61),
      });
      expect(over.status).toBe(413);
    } finally {
      await h.close();
    }
  });
});

describe('readiness when the topic limit shrinks under a running service', () => {
  const topic = uniqueTopic('ingest-shrinking-limit');
  let h: Harness;

  beforeAll(async () => {
    await ensureStackTopics(bootstrapServers, [topicWithLimit(topic, 2 * 1024 * 1024)]);
    h = await startHarness({ bootstrapServers, topic, broker: { probeIntervalMs: 200 } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('reports not ready, naming the problem, while the ceiling does not fit, and ready again once it does', async () => {
    const ready = () => fetch(`${h.url}/health/ready`);
    expect((await ready()).status).toBe(200);

    await ensureStackTopics(bootstrapServers, [topicWithLimit(topic, KAFKA_DEFAULT_LIMIT)]);
    const down = await waitFor(async () => {
      const res = await ready();
      return res.status === 503 ? ((await res.json()) as Record<string, string>) : undefined;
    }, 20_000);
    expect(down.status).toBe('DOWN');
    expect(down.broker).toBe('reachable');
    expect(down.eventCeiling).toMatch(
      /^INGEST_MAX_EVENT_BYTES: 1048576 does not fit topic .* max\.message\.bytes is 1048588/,
    );

    await ensureStackTopics(bootstrapServers, [topicWithLimit(topic, 2 * 1024 * 1024)]);
    const up = await waitFor(async () => {
      const res = await ready();
      return res.status === 200 ? ((await res.json()) as Record<string, string>) : undefined;
    }, 20_000);
    expect(up).toEqual({ status: 'UP', broker: 'reachable', eventCeiling: 'fits' });
  }, 60_000);
});
