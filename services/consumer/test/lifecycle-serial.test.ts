/**
 * Lifecycle commands are serialised: a clear-checkpoints followed at once by a start finishes
 * (rows deleted, broker offsets reset with no member in the group) before the start joins; a start
 * followed at once by a clear-checkpoints makes the latter fail its precondition, as does another
 * member of the group, and then no checkpoint is deleted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness, testEvent, waitFor } from './harness.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness('lifecycle-serial');
});

afterAll(async () => {
  await h?.close();
});

const post = (verb: string) => h.request(`/admin/consumer:${verb}`, { method: 'POST' });

describe('lifecycle serialisation', () => {
  it('runs clear-checkpoints and start one after the other, in arrival order', async () => {
    await h.publish(Array.from({ length: 5 }, (_, i) => testEvent(i, { source: 'urn:test:serial' })));
    await waitFor('5 rows', async () => (await h.count()) === 5);
    expect(await (await post('stop')).json()).toMatchObject({ outcome: 'success' });

    const [clear, start] = await Promise.all([post('clearCheckpoints'), post('start')]);
    expect(clear.status).toBe(200);
    expect(await clear.json()).toMatchObject({ command: 'clear-checkpoints', outcome: 'success' });
    expect(await start.json()).toMatchObject({
      command: 'start',
      outcome: 'success',
      consumer: { state: 'running' },
    });
    // The group re-read the topic from the start: the five records come back as duplicates.
    await waitFor('checkpoints written again', async () => {
      // sql-witness: counts the checkpoints in its own SQL, independently of the store's code under test.
      const { rows } = await h.db.query('SELECT count(*)::int AS n FROM events.consumer_checkpoint');
      return rows[0].n > 0;
    });

    expect(await (await post('stop')).json()).toMatchObject({ outcome: 'success' });
    const [start2, clear2] = await Promise.all([post('start'), post('clearCheckpoints')]);
    expect(await start2.json()).toMatchObject({ outcome: 'success', consumer: { state: 'running' } });
    expect(clear2.status).toBe(400);
    const { rows } = await h.db.query('SELECT count(*)::int AS n FROM events.consumer_checkpoint');
    expect(rows[0].n).toBeGreaterThan(0);
    expect(await h.count()).toBe(5);
  });

  it('refuses clear-checkpoints while another member is in the group, deleting nothing', async () => {
    expect(await (await post('stop')).json()).toMatchObject({ outcome: 'success' });
    // sql-witness: counts the checkpoints in its own SQL, independently of the store's code under test.
    const checkpoints = async () =>
      (await h.db.query('SELECT count(*)::int AS n FROM events.consumer_checkpoint')).rows[0].n as number;
    const before = await checkpoints();
    expect(before).toBeGreaterThan(0);
    // Another replica of the same group, still running.
    const other = h.kafka.consumer({ groupId: h.service.stream.status().groupId });
    try {
      await other.connect();
      await other.subscribe({ topics: [h.topic], fromBeginning: true });
      await other.run({ autoCommit: false, eachMessage: async () => {} });
      await waitFor(
        'the other member in the group',
        async () => (await other.describeGroup()).state === 'Stable',
      );
      const refused = await post('clearCheckpoints');
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({
        error: {
          status: 'FAILED_PRECONDITION',
          details: [expect.objectContaining({ reason: 'group-active' })],
        },
      });
      expect(await checkpoints()).toBe(before);
    } finally {
      await other.disconnect();
    }
    expect((await post('clearCheckpoints')).status).toBe(200);
    expect(await checkpoints()).toBe(0);
  });
});
