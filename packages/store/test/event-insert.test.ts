/** The event insert (`event-insert.ts`) on the devstack PostgreSQL, and its own binary text arrays. */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { binaryTextArray, insertEvents, insertEventsWithCheckpoints, readCheckpoints } from '../src/index.js';
import { useMigratedDatabase } from './migrated-database.js';
import { row } from './rows.js';

const db = useMigratedDatabase('store_ins');

describe('insertEvents', () => {
  it('inserts rows once, counts them per type, and skips rows already stored or repeated in the batch', async () => {
    const first = await insertEvents(db(), [row('i1'), row('i2', { type: 'io.t.b', offset: '1' })]);
    expect(first).toEqual({
      attempted: 2,
      inserted: 2,
      insertedByType: new Map([
        ['io.t.a', 1],
        ['io.t.b', 1],
      ]),
    });
    const again = await insertEvents(db(), [
      row('i1'),
      row('i3', { offset: '9000000000', producer: null }),
      row('i3'),
    ]);
    expect(again).toEqual({ attempted: 3, inserted: 1, insertedByType: new Map([['io.t.a', 1]]) });
    const { rows } = await db().query(
      `SELECT ce_id, tags, device_id, broker_offset::text AS off, data, producer FROM events.cloud_event
       WHERE ce_id IN ('i1', 'i3') ORDER BY ce_id`,
    );
    const dev = { authtype: 'unknown', authid: 'dev' };
    expect(rows).toEqual([
      { ce_id: 'i1', tags: ['a', 'b'], device_id: 'd-1', off: '0', data: { deviceId: 'd-1' }, producer: dev },
      {
        ce_id: 'i3',
        tags: ['a', 'b'],
        device_id: 'd-1',
        off: '9000000000',
        data: { deviceId: 'd-1' },
        producer: null,
      },
    ]);
    expect(await insertEvents(db(), [])).toEqual({ attempted: 0, inserted: 0, insertedByType: new Map() });
  });

  it('stores rows and checkpoints together, or neither when a row is refused', async () => {
    const cps = [{ topic: 'events', partition: 0, nextOffset: '12' }];
    const ok = await insertEventsWithCheckpoints(db(), 'g-ins', [row('t1')], cps);
    expect(ok.inserted).toBe(1);
    expect(await readCheckpoints(db(), 'g-ins', 'events')).toEqual(new Map([[0, 12n]]));

    const refused = insertEventsWithCheckpoints(
      db(),
      'g-ins',
      [row('t2'), row('t3', { data: '{not json' })],
      [{ topic: 'events', partition: 0, nextOffset: '20' }],
    );
    await expect(refused).rejects.toMatchObject({ code: '22P02' });
    expect(await readCheckpoints(db(), 'g-ins', 'events')).toEqual(new Map([[0, 12n]]));
    const { rows } = await db().query("SELECT count(*)::int AS n FROM events.cloud_event WHERE ce_id = 't2'");
    expect(rows[0].n).toBe(0);
    // The connection went back to the db() usable: the next transaction on it commits.
    expect((await insertEventsWithCheckpoints(db(), 'g-ins', [row('t2')], [])).inserted).toBe(1);
  });

  it('writes a batch with stored or repeated rows again skipping them, checkpoints included', async () => {
    const fresh = await insertEventsWithCheckpoints(
      db(),
      'g-dup',
      [row('r1'), row('r2', { type: 'io.t.b' })],
      [{ topic: 'events', partition: 0, nextOffset: '2' }],
    );
    expect(fresh).toEqual({
      attempted: 2,
      inserted: 2,
      insertedByType: new Map([
        ['io.t.a', 1],
        ['io.t.b', 1],
      ]),
    });
    // r1 stored already, r3 twice in the batch: the all-new statement fails, the retry skips them.
    const redelivered = await insertEventsWithCheckpoints(
      db(),
      'g-dup',
      [row('r1'), row('r3', { type: 'io.t.b' }), row('r3', { type: 'io.t.b' })],
      [{ topic: 'events', partition: 0, nextOffset: '5' }],
    );
    expect(redelivered).toEqual({ attempted: 3, inserted: 1, insertedByType: new Map([['io.t.b', 1]]) });
    expect(await readCheckpoints(db(), 'g-dup', 'events')).toEqual(new Map([[0, 5n]]));
    const { rows } = await db().query(
      "SELECT ce_id, count(*)::int AS n FROM events.cloud_event WHERE ce_id LIKE 'r_' GROUP BY ce_id ORDER BY ce_id",
    );
    expect(rows).toEqual([
      { ce_id: 'r1', n: 1 },
      { ce_id: 'r2', n: 1 },
      { ce_id: 'r3', n: 1 },
    ]);
  });
});

describe('binaryTextArray', () => {
  let client: pg.Client;
  beforeAll(async () => {
    client = new pg.Client({ connectionString: inject('stack').databaseUrl });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
  });

  it('reads back element for element, as the text array node-postgres encodes', async () => {
    const values = [
      '{"specversion":"1.0","data":{"q":"a \\"quoted\\" \\\\ path"}}',
      null,
      '',
      'NULL',
      'comma, {brace} "quote" \\backslash\\ tab\tnewline\n',
      'unicode ✓ \u001f sep',
      '  spaces  ',
    ];
    const { rows } = await client.query('SELECT $1::text[] AS mine, $2::text[] AS theirs', [
      binaryTextArray(values),
      values,
    ]);
    expect(rows[0].mine).toEqual(values);
    expect(rows[0].theirs).toEqual(values);
    const empty = await client.query('SELECT $1::text[] AS a', [binaryTextArray([])]);
    expect(empty.rows[0].a).toEqual([]);
  });
});
