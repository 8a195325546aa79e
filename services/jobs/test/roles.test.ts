/**
 * The jobs logged in as the writer role of migrate's grants (DATABASE_WRITER_ROLE): both jobs do
 * all their work, partition creation and detaching included, without owning the events table.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attachedPartitions, type Harness, insertEvents, startHarness } from './harness.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness('roles', { roles: true });
});

afterAll(async () => {
  await h?.close();
});

describe('the jobs as the writer role', () => {
  it('partition-maintenance creates the months ahead and detaches the old ones', async () => {
    h.now = new Date('2040-06-10T00:00:00Z');
    const created = await h.jobs().run('partition-maintenance');
    expect(created).toMatchObject({ outcome: 'success', partitionsCreated: 4, headroomMonths: 3 });
    h.now = new Date('2040-10-10T00:00:00Z');
    const detached = await h.jobs({ MAINTENANCE_RETAIN_MONTHS: '2' }).run('partition-maintenance');
    expect(detached).toMatchObject({ outcome: 'success' });
    expect(detached).not.toHaveProperty('error');
    expect(detached !== 'disabled' && detached.partitionsDetached).toBeGreaterThan(0);
    const parts = await attachedPartitions(h.db);
    expect(parts.has('cloud_event_2040_06')).toBe(false);
    expect(parts.has('cloud_event_2041_01')).toBe(true);
  });

  it('rollup-refresh recomputes the hours and moves the watermark', async () => {
    await insertEvents(h.db, [{ at: '2040-10-10T08:15:00Z', id: 'as-writer' }]);
    expect(await h.jobs().run('rollup-refresh')).toMatchObject({ outcome: 'success', hoursRefreshed: 1 });
  });
});
