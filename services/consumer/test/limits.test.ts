/**
 * A record the store can never hold because of a program limit (SQLSTATE 54000: an index row
 * over the B-tree size limit) is dead-lettered `unpersistable`; the rest of its batch is stored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DlqListing } from '../src/dlq/admin.js';
import { type Harness, metricSum, startHarness, testEvent, waitFor } from './harness.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
let h: Harness;

beforeAll(async () => {
  h = await startHarness('limits');
});

afterAll(async () => {
  await h?.close();
});

describe('program limits', () => {
  it('dead-letters an event whose ce_source exceeds the index row size as unpersistable, storing the others', async () => {
    await h.service.stream.stop();
    // Random (incompressible) text: the identity index row would be ~6 KB, over the B-tree limit.
    const huge = `urn:test:${Array.from({ length: 6_000 }, () => ALPHABET[Math.floor(Math.random() * 62)]).join('')}`;
    // One key: the 21 events land on one partition, in order, and are read as one batch.
    const events = Array.from({ length: 21 }, (_, i) =>
      testEvent(i, { source: i === 10 ? huge : 'urn:test:limits', subject: 'one' }),
    );
    await h.publish(
      events,
      events.map(() => ({ key: 'one' })),
    );
    await h.service.stream.start();
    await waitFor('20 rows', async () => (await h.count(`ce_source = 'urn:test:limits'`)) === 20, 60_000);
    await waitFor(
      'one unpersistable dead letter',
      async () => (await metricSum(h, 'consume_records_poison_total', 'reason="unpersistable"')) === 1,
      60_000,
    );
    expect(await metricSum(h, 'consume_records_poison_total')).toBe(1);
    const listing = (await (
      await h.request('/admin/dlq/records?reason=unpersistable&limit=10')
    ).json()) as DlqListing;
    expect(listing.records).toHaveLength(1);
    expect(listing.records[0]!.detail).toMatch(/^SQLSTATE 54000: /);
    expect(await h.count(`ce_id = 'evt-10'`)).toBe(0);
    expect(await h.count()).toBe(20);
  });
});
