/**
 * Lifecycle commands are serialised: a clear-checkpoints followed at once by a start finishes
 * (rows deleted, broker offsets reset with no member in the group) before the start joins; a start
 * followed at once by a clear-checkpoints makes the latter fail its precondition.
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
});
