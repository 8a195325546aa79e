/**
 * consume_group_lag: one series per partition with a committed offset; partitions the group never
 * committed are omitted (not reported as 0 or as the whole log).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness, testEvent, waitFor } from './harness.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness('lag');
});

afterAll(async () => {
  await h?.close();
});

async function lagSeries(): Promise<Map<string, number>> {
  const text = await h.scrape();
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('consume_group_lag{')) continue;
    const partition = /partition="(\d+)"/.exec(line)![1]!;
    out.set(partition, Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return out;
}

describe('consume_group_lag', () => {
  it('omits the partitions without a committed offset', async () => {
    // One key: every event on one partition of the 12.
    const events = Array.from({ length: 5 }, (_, i) => testEvent(i, { source: 'urn:test:lag' }));
    await h.publish(
      events,
      events.map(() => ({ key: 'same' })),
    );
    await waitFor('5 rows', async () => (await h.count()) === 5);
    const admin = h.kafka.admin();
    await admin.connect();
    const [committed] = await admin.fetchOffsets({ groupId: h.groupId, topics: [h.topic] });
    await admin.disconnect();
    const withCommit = committed!.partitions.filter((p) => p.offset !== '-1').map((p) => String(p.partition));
    expect(withCommit).toHaveLength(1);
    await waitFor('lag series', async () => {
      await h.service.probe.tick();
      return (await lagSeries()).size > 0;
    });
    const series = await lagSeries();
    expect([...series.keys()]).toEqual(withCommit);
    expect(series.get(withCommit[0]!)).toBe(0);
  });
});
