/**
 * dlq_oldest_age_seconds: per dead-letter partition, the age of the oldest letter not yet replayed;
 * 0 for every partition once those letters are replayed (their tombstones are skipped).
 */
import type { Message } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, metricSum, startHarness, waitFor } from './harness.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness('dlq-age');
});

afterAll(async () => {
  await h?.close();
});

const malformed = (n: number): Message => ({ key: `k${n}`, value: Buffer.from(`{"n":${n}}`) });

/** The series of dlq_oldest_age_seconds after a fresh reading, by partition. */
async function ages(): Promise<Map<string, number>> {
  await h.service.dlqAge.tick();
  const out = new Map<string, number>();
  for (const line of (await h.scrape()).split('\n')) {
    if (!line.startsWith('dlq_oldest_age_seconds{')) continue;
    const partition = /partition="(\d+)"/.exec(line)![1]!;
    out.set(partition, Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return out;
}

async function dlqPartitions(): Promise<string[]> {
  const admin = h.kafka.admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchTopicOffsets(h.dlqTopic);
    return offsets.map((o) => String(o.partition)).sort();
  } finally {
    await admin.disconnect();
  }
}

describe('dlq_oldest_age_seconds', () => {
  it('is 0 for every partition of an empty dead-letter topic', async () => {
    const series = await ages();
    expect([...series.keys()].sort()).toEqual(await dlqPartitions());
    expect([...series.values()].every((v) => v === 0)).toBe(true);
  });

  it("reports the oldest waiting letter's age, and 0 once the letters are replayed", async () => {
    const before = Date.now();
    await h.publishRaw(Array.from({ length: 4 }, (_, i) => malformed(i)));
    await waitFor(
      '4 dead letters',
      async () => (await metricSum(h, 'consume_records_poison_total', 'reason="malformed"')) === 4,
    );
    // Stopped, so the replayed records are not dead-lettered again.
    await h.service.stream.stop();
    await new Promise((r) => setTimeout(r, 2000));
    const waiting = await ages();
    const elapsed = (Date.now() - before) / 1000;
    const withLetters = [...waiting.values()].filter((v) => v > 0);
    expect(withLetters.length).toBeGreaterThan(0);
    for (const age of withLetters) {
      expect(age).toBeGreaterThanOrEqual(1.5);
      expect(age).toBeLessThanOrEqual(elapsed + 1);
    }
    expect([...waiting.keys()].sort()).toEqual(await dlqPartitions());

    const replay = await h.request('/admin/dlq:replay?dryRun=false', { method: 'POST' });
    expect(await replay.json()).toMatchObject({ replayed: 4, failed: 0 });
    const after = await ages();
    expect([...after.keys()].sort()).toEqual(await dlqPartitions());
    expect([...after.values()].every((v) => v === 0)).toBe(true);
  });
});
