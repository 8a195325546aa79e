import {
  encodeProducer,
  encodeStructured,
  PRODUCER_HEADER,
  toKafkaRecord,
  UNAUTHENTICATED,
} from '@event-observatory/events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DlqDepth, DlqListing, ReplayReport } from '../src/dlq/admin.js';
import { type Harness, metricSum, startHarness, testEvent, waitFor } from './harness.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness('main');
});

afterAll(async () => {
  await h?.close();
});

describe('consumer on the real broker and database', () => {
  it('turns published events into rows with the verbatim CloudEvent in raw', async () => {
    const events = Array.from({ length: 40 }, (_, i) =>
      testEvent(i, {
        source: 'urn:test:rows',
        extensions: { tags: 'a,b', severity: i % 2 ? 'error' : 'info' },
      }),
    );
    await h.publish(events);
    await waitFor('40 rows', async () => (await h.count(`ce_source = 'urn:test:rows'`)) === 40);
    const { rows } = await h.db.query(
      // sql-witness: reads what the consumer stored in its own SQL, independently of the store's insert under test.
      `SELECT ce_id, raw, ce_type, device_id, severity_rank, tags, broker_topic, partition_key
         FROM events.cloud_event WHERE ce_source = 'urn:test:rows' ORDER BY ce_id`,
    );
    const byId = new Map(rows.map((r) => [r.ce_id, r]));
    for (const e of events) {
      const row = byId.get(e.id)!;
      expect(row.raw).toEqual(JSON.parse(encodeStructured(e)));
      expect(row).toMatchObject({
        ce_type: 'com.example.reading',
        tags: ['a', 'b'],
        broker_topic: h.topic,
        partition_key: toKafkaRecord(e).key,
        device_id: `device-${Number(e.id.slice(4)) % 7}`,
      });
    }
    expect(byId.get('evt-1')!.severity_rank).toBe(50);
    expect(
      await metricSum(h, 'consume_records_persisted_total', 'type="com.example.reading"'),
    ).toBeGreaterThanOrEqual(40);
  });

  it('stores the observatory-producer header in producer, and NULL for a record without one or with a malformed one', async () => {
    const source = 'urn:test:producer';
    const sa = {
      authtype: 'service_account',
      authid: 'system:serviceaccount:payments:exporter',
      issuer: 'https://kubernetes.default.svc',
      namespace: 'payments',
    };
    const header = (value: string) => ({ headers: { [PRODUCER_HEADER]: value } });
    await h.publish(
      [0, 1, 2, 3].map((i) => testEvent(i, { source })),
      [header(encodeProducer(sa)), header(encodeProducer(UNAUTHENTICATED)), header('{"authtype":')],
    );
    await waitFor('4 rows', async () => (await h.count(`ce_source = '${source}'`)) === 4);
    const { rows } = await h.db.query(
      // sql-witness: reads what the consumer stored in its own SQL, independently of the store's insert under test.
      `SELECT ce_id, producer, raw FROM events.cloud_event WHERE ce_source = $1 ORDER BY ce_id`,
      [source],
    );
    expect(rows.map((r) => [r.ce_id, r.producer])).toEqual([
      ['evt-0', sa],
      ['evt-1', { authtype: 'unauthenticated' }],
      ['evt-2', null],
      ['evt-3', null],
    ]);
    // The header stays beside the event: nothing of it is in the stored CloudEvent.
    for (const r of rows) expect(Object.keys(r.raw).filter((k) => k.startsWith('auth'))).toEqual([]);
  });

  it('writes a checkpoint for every committed offset, and the divergence gauge reads 0', async () => {
    await h.service.probe.tick();
    const admin = h.kafka.admin();
    await admin.connect();
    try {
      const [committed] = await admin.fetchOffsets({ groupId: h.groupId, topics: [h.topic] });
      const { rows } = await h.db.query(
        'SELECT partition, next_offset FROM events.consumer_checkpoint WHERE consumer_group = $1 AND topic = $2',
        [h.groupId, h.topic],
      );
      const stored = new Map(rows.map((r) => [r.partition, r.next_offset]));
      for (const p of committed!.partitions) {
        if (p.offset === '-1') continue;
        expect(stored.get(p.partition)).toBe(p.offset);
      }
    } finally {
      await admin.disconnect();
    }
    expect(await h.metric('consume_checkpoint_divergence')).toBe(0);
    expect(await h.metric('partition_default_rows')).toBe(0);
  });

  it('adds no row and loses none when the group re-reads the topic from the start', async () => {
    const before = await h.count();
    const dupBefore = await metricSum(h, 'consume_records_duplicate_total');
    expect(await h.service.stream.stop()).toBe('success');
    const admin = h.kafka.admin();
    await admin.connect();
    await admin.resetOffsets({ groupId: h.groupId, topic: h.topic, earliest: true });
    await admin.disconnect();
    await h.publish([testEvent(1000, { source: 'urn:test:redelivery' })]);
    expect(await h.service.stream.start()).toBe('success');
    await waitFor(
      'redelivered records counted as duplicates',
      async () => (await metricSum(h, 'consume_records_duplicate_total')) - dupBefore >= before,
    );
    await waitFor('the new record', async () => (await h.count()) === before + 1);
    expect(await metricSum(h, 'consume_records_duplicate_total')).toBe(dupBefore + before);
  });

  it('dead-letters exactly the poison record in the middle of a batch of 500 and stores the other 499', async () => {
    await h.service.stream.stop();
    const poisonBefore = await metricSum(h, 'consume_records_poison_total', 'reason="unpersistable"');
    // An id only the store refuses: random (incompressible) text whose identity index row would be
    // ~6 KB, over the B-tree limit (54000). (A payload jsonb cannot hold is refused by decoding.)
    const huge = Array.from(
      { length: 6_000 },
      () => 'abcdefghijklmnopqrstuvwxyz0123456789'[Math.floor(Math.random() * 36)],
    ).join('');
    // One key, so all 500 land on one partition in order and are read as one batch.
    const events = Array.from({ length: 500 }, (_, i) =>
      testEvent(i, { source: 'urn:test:poison', subject: 'one', ...(i === 250 ? { id: huge } : {}) }, { i }),
    );
    await h.publish(events);
    await h.service.stream.start();
    await waitFor('499 rows', async () => (await h.count(`ce_source = 'urn:test:poison'`)) === 499, 60_000);
    await waitFor(
      'one poison',
      async () =>
        (await metricSum(h, 'consume_records_poison_total', 'reason="unpersistable"')) === poisonBefore + 1,
    );
    expect(await h.count(`ce_source = 'urn:test:poison' AND length(ce_id) > 100`)).toBe(0);
    const listing = (await (
      await h.request('/admin/dlq/records?reason=unpersistable&limit=50')
    ).json()) as DlqListing;
    const ours = listing.records.filter((r: { detail: string }) => r.detail.startsWith('SQLSTATE 54000'));
    expect(ours).toHaveLength(1);
    const [letter] = ours;
    expect(letter).toMatchObject({ reason: 'unpersistable', origin: { topic: h.topic } });
    expect(letter!.key).toBe(`${h.topic}/${letter!.origin.partition}/${letter!.origin.offset}`);
  });

  it('dead-letters a time outside the plausible window as invalid-attributes and stores its neighbours', async () => {
    const before = await metricSum(h, 'consume_records_poison_total', 'reason="invalid-attributes"');
    const ancient = testEvent(1, { source: 'urn:test:window', id: 'year-50', time: '0050-01-01T00:00:00Z' });
    const far = testEvent(2, { source: 'urn:test:window', id: 'year-9999', time: '9999-12-31T00:00:00Z' });
    const fresh = Array.from({ length: 10 }, (_, i) => testEvent(i, { source: 'urn:test:window-fresh' }));
    await h.publish([...fresh.slice(0, 5), ancient, far, ...fresh.slice(5)]);
    await waitFor('10 fresh rows', async () => (await h.count(`ce_source = 'urn:test:window-fresh'`)) === 10);
    await waitFor(
      'two invalid-attributes dead letters',
      async () =>
        (await metricSum(h, 'consume_records_poison_total', 'reason="invalid-attributes"')) === before + 2,
    );
    expect(await h.count(`ce_source = 'urn:test:window'`)).toBe(0);
    const listing = (await (
      await h.request('/admin/dlq/records?reason=invalid-attributes&limit=50')
    ).json()) as DlqListing;
    const details = listing.records.map((r: { detail: string }) => r.detail);
    expect(details).toContainEqual(
      expect.stringMatching(/^time 0050-01-01T00:00:00Z is outside the plausible window: before 1970/),
    );
    expect(details).toContainEqual(
      expect.stringMatching(/^time 9999-12-31T00:00:00Z is outside the plausible window: after /),
    );
  });

  it('dead-letters a record that cannot be decoded as malformed', async () => {
    const before = await metricSum(h, 'consume_records_poison_total', 'reason="malformed"');
    await h.publishRaw([
      { key: 'k', value: Buffer.from('{}'), headers: { ce_specversion: '1.0', ce_source: 's' } },
    ]);
    await waitFor(
      'malformed dead letter',
      async () => (await metricSum(h, 'consume_records_poison_total', 'reason="malformed"')) === before + 1,
    );
    const depth = (await (await h.request('/admin/dlq')).json()) as DlqDepth;
    expect(depth.topic).toBe(h.dlqTopic);
    expect(depth.partitions).toHaveLength(3);
    // The poison row of the batch of 500 and this record.
    expect(depth.depth).toBeGreaterThanOrEqual(2);
  });

  it('replay dry-run changes nothing; replay commit re-publishes the original bytes and headers', async () => {
    const admin = h.kafka.admin();
    await admin.connect();
    const endsBefore = await admin.fetchTopicOffsets(h.topic);
    const dlqBefore = await admin.fetchTopicOffsets(h.dlqTopic);
    const plan = await (await h.request('/admin/dlq:replay?reason=malformed', { method: 'POST' })).json();
    expect(plan).toMatchObject({ dryRun: true, planned: 1, replayed: 0 });
    expect(await admin.fetchTopicOffsets(h.topic)).toEqual(endsBefore);
    expect(await admin.fetchTopicOffsets(h.dlqTopic)).toEqual(dlqBefore);
    expect(await metricSum(h, 'dlq_replay_operations_total', 'outcome="skipped"')).toBe(1);

    const done = (await (
      await h.request('/admin/dlq:replay?reason=malformed&dryRun=false', { method: 'POST' })
    ).json()) as ReplayReport;
    expect(done).toMatchObject({ dryRun: false, planned: 1, replayed: 1, failed: 0 });
    const dest = done.records[0]!.destination!;
    // Read the re-published record back and compare it byte for byte with what was first sent.
    const reader = h.kafka.consumer({ groupId: `${h.groupId}-reader`, maxWaitTimeInMs: 100 });
    await reader.connect();
    await reader.subscribe({ topics: [h.topic], fromBeginning: true });
    const found = new Promise<{ key: Buffer | null; value: Buffer | null; headers?: unknown }>((resolve) => {
      void reader.run({
        eachMessage: async ({ partition, message }) => {
          if (partition === dest.partition && message.offset === dest.offset) resolve(message);
        },
      });
    });
    const message = await found;
    await reader.disconnect();
    await admin.disconnect();
    expect(message.key?.toString()).toBe('k');
    expect(message.value).toEqual(Buffer.from('{}'));
    expect(message.headers).toEqual({ ce_specversion: Buffer.from('1.0'), ce_source: Buffer.from('s') });
    expect(await metricSum(h, 'dlq_replay_records_total', 'outcome="success"')).toBe(1);
  });

  it('lifecycle commands change consume_running and need the admin scope', async () => {
    expect((await h.request('/admin/consumer:pause', { method: 'POST', token: null })).status).toBe(401);
    const { signDevToken } = await import('@event-observatory/service-kit');
    const weak = await signDevToken({
      secret: 'consumer-test-secret-0123456789abcdef',
      scopes: ['events:write'],
    });
    expect((await h.request('/admin/consumer:pause', { method: 'POST', token: weak })).status).toBe(403);

    const run = async (verb: string) =>
      (await h.request(`/admin/consumer:${verb}`, { method: 'POST' })).json();
    // A command changes the report at once, but not its age: when the probe's last group reading is
    // more than three intervals old (a busy broker, seen in CI on Kafka 3.9), the gauge is NaN by
    // design until the next reading succeeds. Read it once it reports; a value left unchanged by
    // the command still fails.
    const running = async () => {
      await waitFor('consume_running reported', async () => !Number.isNaN(await h.metric('consume_running')));
      return h.metric('consume_running');
    };
    // The stream may be between a rebalance and its next batch after the earlier tests; start
    // from a consuming stream (seen once in CI: 0 at this point).
    await waitFor('the stream consuming', async () => (await h.metric('consume_running')) === 1);
    expect(await run('pause')).toMatchObject({
      command: 'pause',
      outcome: 'success',
      consumer: { state: 'paused' },
    });
    expect(await running()).toBe(0);
    expect(await run('pause')).toMatchObject({ outcome: 'skipped' });
    expect(await run('resume')).toMatchObject({ outcome: 'success', consumer: { state: 'running' } });
    expect(await running()).toBe(1);
    expect((await h.request('/admin/consumer:clearCheckpoints', { method: 'POST' })).status).toBe(400);
    expect(await run('stop')).toMatchObject({ outcome: 'success', consumer: { state: 'stopped' } });
    expect(await running()).toBe(0);
    expect(await run('clearCheckpoints')).toMatchObject({ command: 'clear-checkpoints', outcome: 'success' });
    // The group's own rows (the replay test above also keeps replay positions in the table).
    const { rows } = await h.db.query(
      'SELECT count(*)::int AS n FROM events.consumer_checkpoint WHERE consumer_group = $1',
      [h.groupId],
    );
    expect(rows[0].n).toBe(0);
    expect(await run('start')).toMatchObject({ outcome: 'success', consumer: { state: 'running' } });
    expect(await running()).toBe(1);
    expect(await run('restart')).toMatchObject({ outcome: 'success', consumer: { state: 'running' } });
    expect(await metricSum(h, 'consume_lifecycle_commands_total', 'command="pause",outcome="success"')).toBe(
      1,
    );
    expect(
      await metricSum(h, 'consume_lifecycle_commands_total', 'command="clear-checkpoints",outcome="failure"'),
    ).toBe(1);
  });

  it('reports broker and database separately on readiness and registers no HTTP timer or auth counter', async () => {
    // Each check has a short bound, which a loaded machine can miss once (seen in CI: a 503 right
    // after the restart above): the answer is read once it is UP.
    let ready: Response | undefined;
    await waitFor('readiness UP', async () => {
      ready = await h.request('/health/ready', { token: null });
      return ready.ok;
    });
    expect(ready?.status).toBe(200);
    expect(await ready?.json()).toEqual({ status: 'UP', broker: 'UP', database: 'UP' });
    expect((await h.request('/metrics', { token: null })).status).toBe(404); // the metrics listener's alone
    const text = await h.scrape();
    expect(text).not.toContain('http_server_requests_seconds');
    expect(text).not.toContain('auth_decisions_total');
    expect(text).toMatch(/^consume_batch_latency_seconds_bucket\{le="0.005",.*outcome="success"/m);
    expect(text).toMatch(/^pool_connections_max\{pool="observatory-write".* 6$/m);
    await waitFor('lag series', async () => {
      await h.service.probe.tick();
      const t = await h.scrape();
      return new RegExp(
        `^consume_group_lag\\{group="${h.groupId}",topic="${h.topic}",partition="\\d+"`,
        'm',
      ).test(t);
    });
  }, 60_000);
});
