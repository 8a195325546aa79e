/**
 * The live tail follows ingestion order, not event time: an event dated ahead of now (ingest
 * accepts 24 h of skew) does not hold back the events stored after it, and a late event (an older
 * time, stored later) is still sent. One dated ahead of its ingestion is marked `future`.
 */
import { newestIngestKey, tailEvents } from '@event-observatory/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './harness.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness('tailorder', { tailPollMs: 50 });
});

afterAll(async () => {
  await h?.close();
});

/** Stores one event of `source` at `at` (each in its own transaction: ingested in this order). */
const insert = (source: string, id: string, at: Date) =>
  h.db.query(
    // sql-witness: plants events with chosen times, ingested in the order the test writes them.
    `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, raw)
     VALUES ($1, $2, $3, 'com.example.order', jsonb_build_object('id', $3::text))`,
    [at, source, id],
  );

describe('live tail order', () => {
  it('reads in ingestion order: a late event is sent, one dated ahead holds nothing back', async () => {
    const source = 'urn:test:tail-order';
    const now = Date.now();
    await insert(source, 'first', new Date(now - 60_000));
    const filter = { sources: [source] };
    const since = await newestIngestKey(h.service.pool, filter);
    await insert(source, 'ahead', new Date(now + 3 * 60_000));
    await insert(source, 'late', new Date(now - 3_600_000));
    await insert(source, 'next', new Date(now - 30_000));
    const rows = await tailEvents(h.service.pool, filter, since, 100);
    expect(rows.map((r) => r.id)).toEqual(['ahead', 'late', 'next']);
    expect(await tailEvents(h.service.pool, filter, rows.at(-1)!.ingestKey, 100)).toEqual([]);
  });

  it('streams every event stored after one dated 3 minutes ahead, that one marked from the future, each linked with the search', async () => {
    const source = 'urn:test:tail-future';
    const stream = new AbortController();
    const res = await fetch(`${h.url}/events/tail?${new URLSearchParams({ source })}`, {
      signal: stream.signal,
    });
    expect(res.status).toBe(200);
    const received: { id: string; future: boolean; href: string }[] = [];
    const reading = (async () => {
      const decoder = new TextDecoder();
      let buffer = '';
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const data = buffer
            .slice(0, end)
            .split('\n')
            .find((l) => l.startsWith('data: '));
          buffer = buffer.slice(end + 2);
          if (data) received.push(JSON.parse(data.slice(6)));
        }
      }
    })().catch(() => {});
    try {
      // The stream takes its starting position (nothing matches yet) before anything is stored.
      await new Promise((r) => setTimeout(r, 300));
      const now = Date.now();
      await insert(source, 'ahead', new Date(now + 3 * 60_000));
      for (let i = 1; i <= 4; i++) await insert(source, `later-${i}`, new Date(now + i));
      await expect.poll(() => received.length, { timeout: 10_000 }).toBe(5);
      expect(received.map((e) => [e.id, e.future])).toEqual([
        ['ahead', true],
        ['later-1', false],
        ['later-2', false],
        ['later-3', false],
        ['later-4', false],
      ]);
      // Each link keeps the search the tail was opened with.
      for (const e of received) expect(new URL(e.href, h.url).searchParams.get('source')).toBe(source);
    } finally {
      stream.abort();
      await reading;
    }
  });
});
