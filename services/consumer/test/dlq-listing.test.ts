/**
 * Dead-letter listing bounds and compaction semantics: a scan reads at most REPLAY_MAX_RECORDS,
 * the reason filter matches only among those, and a replayed letter (tombstoned, not compacted
 * yet) is neither listed nor replayed again, also when the topic holds more than one scan reads
 * (replay positions); two replays at once are refused.
 */
import { ADVISORY_LOCKS, withSessionLock } from '@event-observatory/store';
import type { Message } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, metricSum, startHarness, waitFor } from './harness.js';

const malformed = (n: number): Message => ({
  key: `k${n}`,
  value: Buffer.from(`{"n":${n}}`),
  headers: { ce_specversion: '1.0', ce_source: 's' },
});

async function deadLettered(h: Harness, n: number): Promise<void> {
  await waitFor(
    `${n} malformed dead letters`,
    async () => (await metricSum(h, 'consume_records_poison_total', 'reason="malformed"')) === n,
  );
}

describe('listing bounds (REPLAY_MAX_RECORDS=4)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('dlq-bounds', { env: { REPLAY_MAX_RECORDS: '4' } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('scans at most REPLAY_MAX_RECORDS; a reason filter matches only among them', async () => {
    await h.publishRaw(Array.from({ length: 6 }, (_, i) => malformed(i)));
    await deadLettered(h, 6);
    const none = await (await h.request('/admin/dlq/records?reason=unpersistable&limit=4')).json();
    expect(none).toEqual({ records: [], scanned: 4, truncated: true, returned: 0 });
    const some = await (await h.request('/admin/dlq/records?reason=malformed&limit=4')).json();
    expect(some).toMatchObject({ scanned: 4, truncated: true, returned: 4 });
    expect((await h.request('/admin/dlq/records?limit=5')).status).toBe(400);
    const plan = await (await h.request('/admin/dlq:replay?limit=2', { method: 'POST' })).json();
    expect(plan).toMatchObject({ dryRun: true, scanned: 4, truncated: true, planned: 2 });
  });
});

describe('replay and compaction semantics', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('dlq-replay');
  });
  afterAll(async () => {
    await h?.close();
  });

  it('does not list or replay again a letter already replayed (tombstone, compaction not run)', async () => {
    await h.publishRaw(Array.from({ length: 3 }, (_, i) => malformed(i)));
    await deadLettered(h, 3);
    // Stopped, so the replayed records are not dead-lettered again under new keys.
    await h.service.stream.stop();
    const first = await (
      await h.request('/admin/dlq:replay?reason=malformed&dryRun=false', { method: 'POST' })
    ).json();
    expect(first).toMatchObject({ planned: 3, replayed: 3, failed: 0, truncated: false });
    const second = await (
      await h.request('/admin/dlq:replay?reason=malformed&dryRun=false', { method: 'POST' })
    ).json();
    // From the stored position: only the three tombstones are read again.
    expect(second).toMatchObject({ planned: 0, replayed: 0, records: [], scanned: 3, truncated: false });
    const listing = await (await h.request('/admin/dlq/records')).json();
    expect(listing).toMatchObject({ returned: 0, scanned: 6, truncated: false });
    expect(await metricSum(h, 'dlq_replay_records_total', 'outcome="success"')).toBe(3);
  });
});

describe('replay at volume (REPLAY_MAX_RECORDS=4, 7 letters)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('dlq-volume', { env: { REPLAY_MAX_RECORDS: '4' } });
  });
  afterAll(async () => {
    await h?.close();
  });

  const replay = (query = '') =>
    h.request(`/admin/dlq:replay?dryRun=false&limit=4${query}`, { method: 'POST' });

  it('makes progress past the scan bound and re-publishes every letter exactly once', async () => {
    await h.publishRaw(Array.from({ length: 7 }, (_, i) => malformed(i)));
    await deadLettered(h, 7);
    await h.service.stream.stop(); // the re-published records are not dead-lettered again
    const keys: string[] = [];
    // Each run reads 4 records (letters, then also the tombstones of earlier runs): truncated
    // says there is more, and every run moves the stored positions on.
    for (let run = 0, more = true; more; run++) {
      expect(run).toBeLessThan(8);
      const report = (await (await replay()).json()) as { records: { key: string }[]; truncated: boolean };
      expect(report).toMatchObject({ failed: 0, dryRun: false });
      keys.push(...report.records.map((r) => r.key));
      more = report.truncated;
    }
    expect(keys).toHaveLength(7);
    expect(new Set(keys).size).toBe(7);
    expect(await (await replay()).json()).toMatchObject({ planned: 0, replayed: 0, truncated: false });
    expect(await metricSum(h, 'dlq_replay_records_total', 'outcome="success"')).toBe(7);
  });

  it('refuses a second replay while one runs, in this process and from another replica (store lock)', async () => {
    const [a, b] = await Promise.all([replay(), replay()]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const refused = a.status === 409 ? a : b;
    expect(((await refused.json()) as { error: unknown }).error).toMatchObject({
      status: 'ABORTED',
      message: expect.stringMatching(/already running/),
    });
    // Another replica's replay holds the lock.
    const held = await withSessionLock(h.db, ADVISORY_LOCKS.dlqReplay, async () => (await replay()).status);
    expect(held).toEqual({ taken: true, value: 409 });
    expect((await replay()).status).toBe(200);
  });
});
