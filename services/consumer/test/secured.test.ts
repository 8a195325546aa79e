/**
 * The consumer on a secured Kafka: the shared broker's SASL_SSL listener (SCRAM users
 * made at format time). Configured by the `BROKER_*` variables alone, the consumer stores what it
 * reads, its dead-letter producer writes over the same listener, and a wrong password leaves it
 * not ready with the reason.
 */

import { securedClientEnv } from '@event-observatory/devstack';
import { type CloudEvent, toKafkaRecord } from '@event-observatory/events';
import { describe, expect, inject, it } from 'vitest';
import { testEvent, waitFor } from './harness.js';
import { processFixture, useProcessFixture } from './process.js';

const { secured } = inject('stack');
const password = secured.users[0]!.password;

async function readiness(url: string): Promise<{ status: number; body: Record<string, string> }> {
  const res = await fetch(`${url}/health/ready`);
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

describe('the consumer on the SASL_SSL listener', () => {
  const fixture = useProcessFixture('secured');

  it('stores the events it reads and dead-letters a malformed record, over SASL_SSL', async () => {
    const f = fixture();
    const events: CloudEvent[] = Array.from({ length: 20 }, (_, i) => testEvent(i));
    await f.publish(events);
    const malformed = {
      ...toKafkaRecord(testEvent(99)),
      value: Buffer.from('{}'),
      headers: { ce_source: 's' },
    };
    await f.publishRaw([malformed]);
    const p = await f.spawn(securedClientEnv(secured, 'SASL_SSL'));

    await waitFor('20 rows', async () => (await f.count()) === 20, 60_000);
    await waitFor('one dead letter', async () => (await f.published(`${f.topic}.dlq`)) === 1, 30_000);
    const ready = await readiness(p.url);
    expect(ready).toEqual({ status: 200, body: expect.objectContaining({ status: 'UP', broker: 'UP' }) });
    const metrics = await (await fetch(`${p.metricsUrl}/metrics`)).text();
    expect(metrics).toContain('consume_records_poison_total');
    expect(metrics).not.toContain(password);
    expect(JSON.stringify(p.logs)).not.toContain(password);
  });

  it('with a wrong password is not ready, says why, and stores nothing', async () => {
    const g = await processFixture('secured-wrong');
    try {
      await g.publish([testEvent(1)]);
      const p = await g.spawn({ ...securedClientEnv(secured, 'SASL_SSL'), BROKER_SASL_PASSWORD: 'wrong' });
      const ready = await readiness(p.url);
      expect(ready.status).toBe(503);
      expect(ready.body.broker).toMatch(
        /^unreachable: SASL SCRAM SHA512 authentication failed.*\(BROKER_SASL_USERNAME, BROKER_SASL_PASSWORD\)$/,
      );
      expect(await g.count()).toBe(0);
      expect(JSON.stringify(p.logs)).not.toContain(password);
    } finally {
      await g.close();
    }
  });
});
