/**
 * The query language on a real PostgreSQL: each line read as the query bar reads it, compiled by
 * the store into one statement, and run. OR, NOT and parentheses select what they say; a word finds
 * the types and sources it is part of; a pasted id is looked up over all time; mistakes answer 400
 * with the column, never an empty page.
 */
import { rollupFromEvents } from '@event-observatory/devstack';
import { searchEvents } from '@event-observatory/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSearch } from '../src/filters.js';
import { mergeQueryBar, readQueryBar } from '../src/query-bar.js';
import { type Harness, startHarness } from './harness.js';

let h: Harness;

/** id, type, source, data, subject, age in minutes. */
const ROWS: [string, string, string, object, string | null, number][] = [
  ['pf-1', 'payment.failed', '/payments/eu', { amount: 10 }, null, 5],
  ['pf-2', 'payment.failed', '/payments/eu', { amount: 20 }, null, 6],
  ['pf-3', 'payment.failed', '/payments/eu', { amount: 30 }, 'card', 7],
  ['ps-1', 'payment.succeeded', '/payments/us', { amount: 5 }, 'card/visa', 8],
  ['ps-2', 'payment.succeeded', '/payments/us', { amount: 50 }, 'card/amex', 9],
  ['oc-1', 'order.created', '/orders/eu', { amount: 100, note: 'failed attempt' }, null, 10],
  ['ord-2041', 'order.created', '/orders/eu', { amount: 7 }, null, 20 * 24 * 60],
];

beforeAll(async () => {
  h = await startHarness('query');
  for (const [id, type, source, data, subject, minutes] of ROWS) {
    await h.db.query(
      // sql-witness: plants events with chosen types, sources and payloads for the query language to select.
      `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, ce_subject, raw, data)
       VALUES (now() - make_interval(mins => $5), $1, $2, $3, $4,
               jsonb_build_object('specversion', '1.0', 'id', $2::text, 'source', $1::text, 'type', $3::text), $6)`,
      [source, id, type, subject, minutes, JSON.stringify(data)],
    );
  }
  await rollupFromEvents(h.db);
});

afterAll(async () => {
  await h?.close();
});

/** The ids a query-bar line selects (the default range, last 24 hours, unless the line changes it). */
async function ids(line: string): Promise<string[]> {
  const read = readQueryBar(line);
  if ('error' in read) throw new Error(`${read.column}: ${read.error}`);
  const parsed = parseSearch(mergeQueryBar(new URLSearchParams(), read.params));
  expect(parsed.problems).toEqual([]);
  const page = await searchEvents(h.service.pool, parsed.filter, { limit: 100 });
  return page.rows.map((r) => r.id).sort();
}

describe('query language on PostgreSQL', () => {
  it('OR selects either side, not the word OR', async () => {
    expect(await ids('type:payment.failed OR type:payment.succeeded')).toEqual([
      'pf-1',
      'pf-2',
      'pf-3',
      'ps-1',
      'ps-2',
    ]);
    expect(await ids('type:A OR type:B')).toEqual([]);
  });

  it('AND binds tighter than OR; parentheses group; NOT excludes, a missing value included', async () => {
    expect(await ids('type:order.created OR type:payment.failed data.amount>=20')).toEqual([
      'oc-1',
      'pf-2',
      'pf-3',
    ]);
    expect(await ids('(type:order.created OR type:payment.failed) data.amount>=20')).toEqual([
      'oc-1',
      'pf-2',
      'pf-3',
    ]);
    expect(await ids('(type:payment.failed OR type:payment.succeeded) NOT data.amount<20')).toEqual([
      'pf-2',
      'pf-3',
      'ps-2',
    ]);
    expect(await ids('NOT type:payment.* NOT subject:card')).toEqual(['oc-1']);
    expect(await ids('type:payment.failed NOT subject:card')).toEqual(['pf-1', 'pf-2']);
  });

  it('a subject ending in * is a prefix; without it, exact', async () => {
    expect(await ids('subject:card/*')).toEqual(['ps-1', 'ps-2']);
    expect(await ids('subject:card/v*')).toEqual(['ps-1']);
    expect(await ids('subject:card')).toEqual(['pf-3']);
    expect(await ids('subject:card/* OR subject:card')).toEqual(['pf-3', 'ps-1', 'ps-2']);
    expect(await ids('type:payment.* NOT subject:card/*')).toEqual(['pf-1', 'pf-2', 'pf-3']);
  });

  it('a word finds the types and sources it is part of, besides the text', async () => {
    expect(await ids('failed')).toEqual(['oc-1', 'pf-1', 'pf-2', 'pf-3']);
    expect(await ids('eu')).toEqual(['oc-1', 'pf-1', 'pf-2', 'pf-3']);
    expect(await ids('payment eu')).toEqual(['pf-1', 'pf-2', 'pf-3']);
    expect(await ids('succeeded OR created')).toEqual(['oc-1', 'ps-1', 'ps-2']);
    expect(await ids('-failed type:payment.*')).toEqual(['ps-1', 'ps-2']);
  });

  it('looks up a pasted id, id: and an event name over all time', async () => {
    expect(await ids('ord-2041')).toEqual(['ord-2041']);
    expect(await ids('id:ord-2041')).toEqual(['ord-2041']);
    expect(await ids('events/%2Forders%2Feu,ord-2041')).toEqual(['ord-2041']);
    expect(await ids('range:24h id:ord-2041')).toEqual([]);
  });

  it('answers 400 naming the column, for the bar and for a query parameter', async () => {
    const bar = await h.get(`/events?${new URLSearchParams({ bar: 'type:a data.amount>abc' })}`);
    expect(bar.status).toBe(400);
    expect(await bar.text()).toContain('Column 20: data.amount&gt;abc: &gt; compares numbers');
    const query = await h.get(`/events?${new URLSearchParams({ query: 'type:a OR' })}`);
    expect(query.status).toBe(400);
    expect(await query.text()).toContain('query: column 8: OR needs a term after it');
    const exported = await h.get(`/events.ndjson?${new URLSearchParams({ query: '(a' })}`);
    expect(exported.status).toBe(400);
    expect(await exported.json()).toMatchObject({
      error: {
        code: 400,
        message: expect.stringContaining('query: column 1: this parenthesis is never closed'),
      },
    });
  });

  it('a query parameter filters the page, the export and the totals alike', async () => {
    const page = await h.get(`/events?${new URLSearchParams({ query: 'type:payment.failed OR ps-1' })}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Matching events: <strong>3</strong>');
    const exported = await h.get(`/events.ndjson?${new URLSearchParams({ query: 'NOT type:payment.*' })}`);
    const lines = (await exported.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    // The last line says how the export ended.
    expect(lines.at(-1)).toEqual({ export: { complete: true, rows: 1 } });
    expect(lines.slice(0, -1).map((l) => l.id)).toEqual(['oc-1']);
  });
});
