/**
 * Search on a streaming replica (PostgreSQL's own physical replication of the devstack server):
 * the page with its total, facets and histogram, an event's detail, the receipt and the live tail
 * all read from the standby; the saved searches and the logouts are written on the primary; a
 * replica that goes away answers 503 with words and search answers again once it is back, without
 * a restart of the service.
 */
import { rmSync } from 'node:fs';
import { type ReplicaHandle, startReplica, tempDataDir } from '@event-observatory/devstack';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { type Harness, startHarness } from './harness.js';
import { startLocalHarness } from './local-harness.js';
import { Client, csrfOf, form, SESSION_COOKIE } from './login-client.js';

// sql-witness: writes on the primary what search must then find on the replica, and asks the standby whether it is one.
const SEED = 500;
const dir = tempDataDir('search-replica');
let replica: ReplicaHandle;
let h: Harness;
const text = async (path: string) => {
  const res = await h.get(path);
  return { status: res.status, body: (await res.text()).replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ') };
};
/** The database's URL on the replica. */
const replicaUrl = (databaseUrl: string) => {
  const u = new URL(databaseUrl);
  u.port = String(replica.port);
  return u.toString();
};
const caughtUp = () =>
  vi.waitFor(async () => expect(await replica.lagBytes()).toBe(0), { timeout: 20_000, interval: 100 });

beforeAll(async () => {
  const stack = inject('stack');
  replica = await startReplica({
    primary: { url: stack.databaseUrl, dataDir: stack.postgresDataDir },
    dataDir: dir,
    slot: 'search_replica_test',
  });
  // Written on the primary (migrations, seed); search reads the same database on the replica.
  h = await startHarness('replica', { seed: SEED, readUrl: replicaUrl });
  await caughtUp();
}, 180_000);

afterAll(async () => {
  await h?.close();
  await replica?.remove();
  rmSync(dir, { recursive: true, force: true });
});

describe('search on a streaming replica', () => {
  it('reads from the standby: a read-only session in recovery', async () => {
    const { rows } = await h.service.pool.query<{ standby: boolean; port: number }>(
      'select pg_is_in_recovery() as standby, inet_server_port() as port',
    );
    expect(rows).toEqual([{ standby: true, port: replica.port }]);
  });

  it('answers a page with its total, facets and histogram, and an event detail', async () => {
    // 30 days, not 7: the oldest seeded row lies exactly 7 days before the seed, in the rollup's
    // first hour of a 7-day range only until the next hour begins (a run across it counted 499).
    const page = await text('/events?range=30d');
    expect(page.status).toBe(200);
    expect(page.body).toMatch(new RegExp(`${SEED}\\s+events`));
    const html = await (await h.get('/events?range=30d')).text();
    expect(html).toContain('class="facets"');
    // The drawn histogram, not its "unavailable" panel: its bars hold every seeded event.
    expect(html).toContain('class="histogram"');
    expect(page.body).toContain(`${SEED} events, one bar per`);
    const uid = /href="\/events\/([0-9a-f-]{36})/.exec(html)?.[1];
    expect(uid).toBeDefined();
    expect((await h.get(`/events/${uid}`)).status).toBe(200);
  });

  it('answers a receipt and streams the tail from what the replica has replayed', async () => {
    const topic = 'replica.receipt';
    const insert = (n: number) =>
      h.db.query(
        `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, raw, broker_topic, broker_partition, broker_offset)
         VALUES (now(), 'urn:test:replica', $2, 'com.example.replicated', '{}', $1, 0, $3)`,
        [topic, `replicated-${n}`, 6 + n],
      );
    await insert(1);
    await caughtUp();
    const receipt = (await text(`/receipt?topic=${topic}&partition=0&offset=7`)).body;
    expect(receipt).toMatch(/Stored at .* com\.example\.replicated from urn:test:replica, id replicated-1/);

    // The tail starts after what is stored when its first poll runs (a moment after it answers):
    // events written after that arrive. One more event a second until one does.
    const tail = new AbortController();
    const res = await fetch(`${h.url}/events/tail?source=urn:test:replica`, { signal: tail.signal });
    expect(res.status).toBe(200);
    let streamed = '';
    const reading = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of res.body!) streamed += decoder.decode(chunk, { stream: true });
    })().catch(() => {});
    try {
      for (let n = 2; !/"id":"replicated-\d+"/.test(streamed) && n < 30; n++) {
        await insert(n);
        await caughtUp();
        await new Promise((r) => setTimeout(r, 1_000));
      }
      expect(streamed).toMatch(/"id":"replicated-\d+"/);
    } finally {
      tail.abort();
      await reading;
    }
  });

  it('says a receipt may be stored, not yet on the replica, while the replica lags', async () => {
    const topic = 'replica.lagging';
    // A group's checkpoint past nothing yet, replayed; then replay stops and the row is written.
    await h.db.query(
      `INSERT INTO events.consumer_checkpoint (consumer_group, topic, partition, next_offset) VALUES ('g', $1, 0, 3)`,
      [topic],
    );
    await caughtUp();
    const superuser = new pg.Client({ connectionString: replica.url });
    await superuser.connect();
    try {
      await superuser.query('SELECT pg_wal_replay_pause()');
      await h.db.query(
        `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, raw, broker_topic, broker_partition, broker_offset)
         VALUES (now(), 'urn:test:replica', 'lagging-1', 'com.example.replicated', '{}', $1, 0, 3)`,
        [topic],
      );
      const lagging = (await text(`/receipt?topic=${topic}&partition=0&offset=3`)).body;
      // Not "Not yet stored": the row is on the primary, the replica's replay paused before it.
      expect(lagging).not.toContain('Not yet stored');
      expect(lagging).toContain('Not yet on the replica : it may already be stored on the primary.');
      expect(lagging).toMatch(
        /Read from a replica, which has replayed the primary(&#39;|')s transactions up to .* UTC \(\d+ s ago\)/,
      );
      expect(lagging).toContain('there the consumer has 1 record(s) of this partition to read');
      // Any other receipt without a row keeps its own answer, with the replica's position below it:
      // a topic's first checkpoint may not be replayed yet either.
      const unknown = (await text('/receipt?topic=replica.unheard-of&partition=0&offset=0')).body;
      expect(unknown).toContain('Unknown topic');
      expect(unknown).toMatch(
        /Read from a replica ?: it has replayed the primary(&#39;|')s transactions up to/,
      );
    } finally {
      await superuser.query('SELECT pg_wal_replay_resume()');
      await superuser.end();
    }
    await caughtUp();
    expect((await text(`/receipt?topic=${topic}&partition=0&offset=3`)).body).toContain('Stored at');
  });

  it("saves, lists and deletes a saved search on the primary, the replica's own session being read-only", async () => {
    const post = (path: string, fields: Record<string, string>) =>
      fetch(`${h.url}${path}`, { ...form(fields, h.url), redirect: 'manual' });
    const saved = await post('/saved', { name: 'replicated', params: 'type=com.example.replicated' });
    expect(saved.status).toBe(303);
    const listing = await (await h.get('/saved')).text();
    expect(listing).toContain('>replicated</a>');
    const id = /action="\/saved\/([0-9a-f-]{36})\/delete"/.exec(listing)?.[1];
    expect(id).toBeDefined();
    expect((await post(`/saved/${id}/delete`, {})).status).toBe(303);
    expect(await (await h.get('/saved')).text()).not.toContain('>replicated</a>');
    // The read pool could not have written it: it is the standby's.
    await expect(
      h.service.pool.query(`INSERT INTO events.saved_search (owner, name, params) VALUES ('x', 'x', '')`),
    ).rejects.toMatchObject({ code: '25006' });
  });

  it('records a logout on the primary: a copy of the cookie opens nothing afterwards', async () => {
    const password = 'replica logout password';
    const local = await startLocalHarness('replica_login', password, { readUrl: replicaUrl });
    try {
      await caughtUp(); // the new database's migrations, on the replica too
      const client = new Client();
      const { res } = await client.logIn(local.url, 'admin', password);
      const copy = new Client();
      copy.jar.set(SESSION_COOKIE, client.jar.get(SESSION_COOKIE)!);
      expect((await copy.send(`${local.url}/receipt`)).status).toBe(200);
      await client.send(`${local.url}/logout`, form({ csrf: csrfOf(await res.text()) }, local.url));
      expect((await copy.send(`${local.url}/receipt`)).status).toBe(302);
      const { rows } = await local.db.query('SELECT count(*)::int AS n FROM events.ended_session');
      expect(rows).toEqual([{ n: 1 }]);
    } finally {
      await local.close();
    }
  });

  it('answers 503 with words while the replica is down, and searches again once it is back', async () => {
    await replica.stop();
    try {
      const down = await text('/events?range=7d');
      expect(down.status).toBe(503);
      expect(down.body).not.toMatch(/SQLSTATE|ECONNREFUSED|\bat .+\.(ts|js):\d+/);
      expect((await h.get('/health/ready')).status).toBe(503);
    } finally {
      await replica.start();
    }
    await vi.waitFor(async () => expect((await text('/events?range=7d')).status).toBe(200), {
      timeout: 20_000,
      interval: 250,
    });
  });
});
