/**
 * Visibility end to end: search logs in as the reader role (row-level security applies) and two
 * viewers of different groups each see only their team's events on every read path: the page's
 * rows, total, facets and histogram (from the rollup and from the table), the detail page, an id
 * lookup, a receipt, the overview, the export, the live tail and the query bar's suggestions; a viewer no rule matches sees nothing. The
 * header says what each one sees.
 */
import { rollupFromEvents } from '@event-observatory/devstack';
import type { ErrorResponseBody } from '@event-observatory/service-kit/errors';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowSecurityGate } from '../src/row-security.js';
import { parseVisibility, VisibilityError } from '../src/visibility.js';
import { type Harness, startHarness } from './harness.js';
import { asViewer, headerViewer } from './test-viewer.js';

const RULES = `
- groups: [team-a]
  see: { sourcePrefixes: ['urn:team-a:'] }
- groups: [team-b]
  see: { typePrefixes: [com.team-b.] }
`;
const TEAMS = ['a', 'b'] as const;
type Team = (typeof TEAMS)[number];
const PER_TEAM = 5;
const viewerOf = (team: Team) => asViewer(`user-${team}`, [`team-${team}`]);
const other = (team: Team): Team => (team === 'a' ? 'b' : 'a');

let h: Harness;

/** Inserts one event of `team` (as the consumer would, with broker coordinates); its uid and time. */
async function insert(team: Team, n: number, minutesAgo: number): Promise<{ uid: string; t: string }> {
  // sql-witness: rows of two teams with broker coordinates, which the devstack seed does not make.
  const { rows } = await h.db.query<{ uid: string; t: string }>(
    `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, ce_subject, raw,
                                     broker_topic, broker_partition, broker_offset)
     VALUES (date_trunc('second', now()) - $4::int * interval '1 minute', 'urn:team-' || $1 || ':sensor',
             $1 || '-' || $2, 'com.team-' || $1 || '.reading', 'shared',
             jsonb_build_object('id', $1 || '-' || $2, 'source', 'urn:team-' || $1 || ':sensor'), 'events', $3, $2::bigint)
     RETURNING event_uid AS uid, to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS t`,
    [team, n, team === 'a' ? 0 : 1, minutesAgo],
  );
  return rows[0]!;
}

const stored = new Map<Team, { uid: string; t: string }>();

beforeAll(async () => {
  h = await startHarness('visibility', {
    asReader: true,
    authenticate: headerViewer,
    visibility: parseVisibility(RULES, 'rules.yaml'),
    tailPollMs: 50,
  });
  for (const team of TEAMS)
    for (let n = 1; n <= PER_TEAM; n++) stored.set(team, await insert(team, n, 10 * n));
  // sql-witness: the consumer's checkpoints past every record, and of a topic nobody here may know.
  await h.db.query(
    `INSERT INTO events.consumer_checkpoint (consumer_group, topic, partition, next_offset)
     VALUES ('observatory', 'events', 0, 100), ('observatory', 'events', 1, 100),
            ('observatory', 'private-topic-of-c', 0, 7)`,
  );
  await rollupFromEvents(h.db);
});

afterAll(async () => {
  await h?.close();
});

async function page(path: string, team: Team): Promise<string> {
  const res = await h.get(path, viewerOf(team));
  expect(res.status, path).toBe(200);
  return res.text();
}

describe.each(TEAMS)('the viewer of team %s', (team) => {
  const mine = `urn:team-${team}:sensor`;
  const theirs = `urn:team-${other(team)}:sensor`;

  it("gets only its own types and sources as the query bar's suggestions", async () => {
    for (const line of ['source:urn:team-', 'type:com.team-']) {
      const res = await h.get(`/suggest?bar=${encodeURIComponent(line)}`, viewerOf(team));
      expect(res.status).toBe(200);
      const { suggestions } = (await res.json()) as { suggestions: string[] };
      expect(suggestions, line).toEqual([
        line.startsWith('source') ? `source:${mine}` : `type:com.team-${team}.reading`,
      ]);
    }
  });

  it('sees only its events on the page: rows, total, facets, histogram from the rollup and from the table', async () => {
    // range=7d: a time-only filter in whole hours, so the histogram reads the rollup;
    // subject=shared: a filter the rollup cannot answer, so it counts the table.
    for (const [path, source] of [
      ['/events?range=7d', 'rollup'],
      ['/events?range=7d&subject=shared', 'table'],
    ]) {
      const body = await page(path!, team);
      expect(body, path).toContain(mine);
      expect(body, path).not.toContain(theirs);
      expect(body, path).not.toContain(`com.team-${other(team)}.`);
      expect(body, path).toMatch(new RegExp(`Matching events: <strong>${PER_TEAM}</strong>`));
      expect(body.match(/(\d+) events, one bar per/)?.[1], path).toBe(String(PER_TEAM));
      expect(body.includes('from the hourly rollup'), path).toBe(source === 'rollup');
    }
  });

  it('finds its own event by detail link and by id, and not the other team’s', async () => {
    const own = stored.get(team)!;
    const foreign = stored.get(other(team))!;
    expect((await h.get(`/events/${own.uid}?t=${encodeURIComponent(own.t)}`, viewerOf(team))).status).toBe(
      200,
    );
    expect(
      (await h.get(`/events/${foreign.uid}?t=${encodeURIComponent(foreign.t)}`, viewerOf(team))).status,
    ).toBe(404);
    expect(await page(`/events?range=7d&id=${team}-1`, team)).toContain(
      'Matching events: <strong>1</strong>',
    );
    expect(await page(`/events?range=7d&id=${other(team)}-1`, team)).toContain(
      'Matching events: <strong>0</strong>',
    );
  });

  it('gets a receipt for its own record only', async () => {
    const receipt = (t: Team) => `/receipt?topic=events&partition=${t === 'a' ? 0 : 1}&offset=2`;
    expect(await page(receipt(team), team)).toContain('<strong>Stored</strong>');
    // The consumer has passed the other team's record, which is stored: to this viewer it is not
    // there, and the receipt must not call it dead-lettered.
    const theirs = await page(receipt(other(team)), team);
    expect(theirs).not.toContain('<strong>Stored</strong>');
    expect(theirs).toContain('<strong>Not among the events you may see</strong>');
    expect(theirs).not.toContain('Passed by the consumer without a row');
  });

  it("names no other team's topic on a receipt of an unknown one", async () => {
    const html = await page('/receipt?topic=no-such-topic&partition=0&offset=1', team);
    expect(html).toContain('<strong>Unknown topic</strong>');
    expect(html).not.toContain('private-topic-of-c');
    expect(html).not.toContain('topics the consumer reads');
  });

  it('exports only its events', async () => {
    const lines = (await page('/events.ndjson?range=7d', team)).trim().split('\n');
    const rows = lines.slice(0, -1).map((l) => JSON.parse(l) as { source: string });
    expect(rows.map((r) => r.source)).toEqual(Array(PER_TEAM).fill(mine));
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ export: { complete: true, rows: PER_TEAM } });
  });

  it('sees only its sources and types on the overview', async () => {
    const body = await page('/?range=7d', team);
    expect(body).toContain(mine);
    expect(body).not.toContain(theirs);
  });

  it('is told in the header what it sees', async () => {
    const body = await page('/events?range=7d', team);
    expect(body).toContain(team === 'a' ? 'Sees: sources urn:team-a:…' : 'Sees: types com.team-b.…');
  });
});

describe('a viewer no rule matches', () => {
  it('sees no events, and the header says so', async () => {
    const res = await h.get('/events?range=7d', asViewer('stranger', ['visitors']));
    const body = await res.text();
    expect(body).toContain('Matching events: <strong>0</strong>');
    expect(body).not.toContain('urn:team-');
    expect(body).toContain('Sees: no events');
    const overview = await (await h.get('/?range=7d', asViewer('stranger'))).text();
    expect(overview).not.toContain('urn:team-');
    const suggested = await h.get('/suggest?bar=source:urn:', asViewer('stranger', ['visitors']));
    expect(await suggested.json()).toEqual({ suggestions: [] });
  });
});

describe('suggestions', () => {
  it('need a viewer and a line of at most 500 characters', async () => {
    expect((await h.get('/suggest?bar=type:')).status).toBe(401);
    const long = await h.get(`/suggest?bar=${'a'.repeat(501)}`, viewerOf('a'));
    expect(long.status).toBe(400);
    expect(await long.json()).toMatchObject({ error: { message: 'bar: at most 500 characters' } });
  });
});

describe('the check of the role (rowSecurityGate)', () => {
  const warnings: object[] = [];
  const logger = { debug() {}, info() {}, warn: (o: object) => warnings.push(o), error() {} };
  const never = new AbortController().signal;

  it('serves the reader once checked, and refuses the superuser, which row-level security does not apply to', async () => {
    const reader = rowSecurityGate(logger, never);
    expect([await reader.check(), reader.serving()]).toEqual([{ ok: true, value: 'unverified' }, false]);
    await expect(reader.verify(h.service.pool)).resolves.toBeUndefined();
    expect([await reader.check(), reader.serving()]).toEqual([{ ok: true, value: 'UP' }, true]);
    const superuser = new pg.Pool({ connectionString: h.databaseUrl, max: 1 });
    try {
      const gate = rowSecurityGate(logger, never);
      await expect(gate.verify(superuser)).rejects.toThrow(VisibilityError);
      expect([await gate.check(), gate.serving()]).toEqual([{ ok: false, value: 'bypassed' }, false]);
    } finally {
      await superuser.end();
    }
  });

  it('refuses reads, not readiness, while unchecked: the schema may come from a hook that waits on readiness', async () => {
    const unchecked = await startHarness('vis_unchecked', {
      serving: () => false,
      authenticate: headerViewer,
    });
    try {
      // The login still answers who is asking; a known viewer waits.
      expect((await unchecked.get('/events?range=all')).status).toBe(401);
      const page = await unchecked.get('/events?range=all', viewerOf('a'));
      expect(page.status).toBe(503);
      expect(page.headers.get('retry-after')).toBe('5');
      expect(((await page.json()) as ErrorResponseBody).error.details[0]?.reason).toBe('role-unverified');
      expect((await unchecked.get('/health/ready')).status).toBe(200);
    } finally {
      await unchecked.close();
    }
  });

  it('keeps reads refused while the store cannot say, asking again until stopped', async () => {
    const nowhere = new pg.Pool({ connectionString: 'postgres://x:y@127.0.0.1:1/none', max: 1 });
    nowhere.on('error', () => {});
    const stop = new AbortController();
    try {
      const gate = rowSecurityGate(logger, stop.signal);
      const verifying = gate.verify(nowhere);
      await expect.poll(() => warnings.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(2);
      expect([await gate.check(), gate.serving()]).toEqual([{ ok: true, value: 'unverified' }, false]);
      stop.abort();
      await expect(verifying).rejects.toThrow();
    } finally {
      await nowhere.end();
    }
  });
});

// Last: the tails add events to both teams.
describe('the live tail', () => {
  it.each(TEAMS)('of team %s sends only its new events', async (team) => {
    const theirs = `urn:team-${other(team)}:sensor`;
    const n = team === 'a' ? 101 : 102;
    const stop = new AbortController();
    try {
      const res = await h.get('/events/tail?range=7d', viewerOf(team), stop.signal);
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      // The stream starts after the newest visible match; wait for its first poll, then write the
      // other team's event first: in ingestion order it would arrive before this team's.
      await new Promise((resolve) => setTimeout(resolve, 500));
      await insert(other(team), n, 0);
      await insert(team, n, 0);
      while (!text.includes(`"${team}-${n}"`)) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      expect(text).toContain(`"${team}-${n}"`);
      expect(text).not.toContain(theirs);
    } finally {
      stop.abort();
    }
  });
});
