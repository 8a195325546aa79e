/**
 * The `observatory-producer` header: every record ingest publishes names who sent it, from the
 * verified token (or `unauthenticated` without authentication), beside the unchanged event.
 */
import { PRODUCER_HEADER } from '@event-observatory/events';
import { signDevToken } from '@event-observatory/service-kit/auth';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  ceHeaders,
  createTopic,
  type Harness,
  readRecords,
  SECRET,
  startHarness,
  uniqueTopic,
} from './harness.js';

const { bootstrapServers } = inject('kafka');
const T = () => new Date(Date.now() - 60_000).toISOString();

let secured: Harness;
let open: Harness;

beforeAll(async () => {
  const [a, b] = [uniqueTopic('ingest-who'), uniqueTopic('ingest-anon')];
  await createTopic(bootstrapServers, a);
  await createTopic(bootstrapServers, b);
  secured = await startHarness({ bootstrapServers, topic: a });
  open = await startHarness({ bootstrapServers, topic: b, auth: { enabled: false } });
});
afterAll(async () => {
  await Promise.all([secured?.close(), open?.close()]);
});

/** The producer header of each record on `h`'s topic, by event id, once `ids` are all there. */
async function producers(h: Harness, ids: string[]): Promise<Map<string, unknown>> {
  const records = await readRecords(bootstrapServers, h.topic, (rs) =>
    ids.every((id) => rs.some((r) => r.headers.ce_id?.toString() === id)),
  );
  return new Map(
    records.map((r) => {
      const header = r.headers[PRODUCER_HEADER];
      expect(r.headers).not.toHaveProperty(`ce_${PRODUCER_HEADER}`);
      return [
        r.headers.ce_id?.toString() ?? '',
        header === undefined ? undefined : JSON.parse(header.toString()),
      ];
    }),
  );
}

describe('the observatory-producer header', () => {
  it('names the subject and issuer of an HS256 dev token, and a service account with its namespace', async () => {
    const dev = await signDevToken({
      secret: SECRET,
      scopes: ['events:write'],
      issuer: 'https://issuer.test',
    });
    const account = await signDevToken({
      secret: SECRET,
      scopes: ['events:write'],
      subject: 'system:serviceaccount:payments:exporter',
      issuer: 'https://kubernetes.default.svc',
    });
    const single = await fetch(`${secured.url}/v1/events`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${dev}`,
        ...ceHeaders('p-dev', T()),
        'content-type': 'application/json',
      },
      body: '{"v":1}',
    });
    expect(single.status).toBe(200);
    const batch = await fetch(`${secured.url}/v1/events:batchCreate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account}`, 'content-type': 'application/cloudevents-batch+json' },
      body: JSON.stringify(
        ['p-sa-1', 'p-sa-2'].map((id) => ({
          specversion: '1.0',
          id,
          source: 'https://example.com/sensors',
          type: 'com.example.reading',
          time: T(),
        })),
      ),
    });
    expect((await batch.json()) as object).toMatchObject({ created: 2, failed: 0 });
    const found = await producers(secured, ['p-dev', 'p-sa-1', 'p-sa-2']);
    expect(found.get('p-dev')).toEqual({ authtype: 'unknown', authid: 'dev', issuer: 'https://issuer.test' });
    const sa = {
      authtype: 'service_account',
      authid: 'system:serviceaccount:payments:exporter',
      issuer: 'https://kubernetes.default.svc',
      namespace: 'payments',
    };
    expect(found.get('p-sa-1')).toEqual(sa);
    expect(found.get('p-sa-2')).toEqual(sa);
  });

  it('says unauthenticated when authentication is disabled', async () => {
    const res = await fetch(`${open.url}/v1/events`, {
      method: 'POST',
      headers: ceHeaders('p-open', T()),
    });
    expect(res.status).toBe(200);
    expect((await producers(open, ['p-open'])).get('p-open')).toEqual({ authtype: 'unauthenticated' });
  });
});
