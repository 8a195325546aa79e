/** The statements on `events.consumer_checkpoint`, on the devstack PostgreSQL. */
import { describe, expect, it } from 'vitest';
import { deleteCheckpoints, readCheckpoints, upsertCheckpoints } from '../src/index.js';
import { useMigratedDatabase } from './migrated-database.js';

const db = useMigratedDatabase('store_cp');

describe('consumer checkpoints', () => {
  it('records the next offset per partition and never moves one back', async () => {
    await upsertCheckpoints(db(), 'g1', [
      { topic: 't', partition: 0, nextOffset: '10' },
      { topic: 't', partition: 1, nextOffset: '7' },
    ]);
    await upsertCheckpoints(db(), 'g1', [
      { topic: 't', partition: 0, nextOffset: '4' }, // a redelivered batch
      { topic: 't', partition: 1, nextOffset: '9000000000' }, // beyond 32 bits
    ]);
    expect(await readCheckpoints(db(), 'g1', 't')).toEqual(
      new Map([
        [0, 10n],
        [1, 9_000_000_000n],
      ]),
    );
  });

  it('joins the transaction of the client it is given', async () => {
    const client = await db().connect();
    try {
      await client.query('BEGIN');
      await upsertCheckpoints(client, 'g2', [{ topic: 't', partition: 0, nextOffset: '5' }]);
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
    expect((await readCheckpoints(db(), 'g2', 't')).size).toBe(0);
  });

  it('deletes only the rows of the given group and topic', async () => {
    await upsertCheckpoints(db(), 'g3', [
      { topic: 'a', partition: 0, nextOffset: '1' },
      { topic: 'a', partition: 1, nextOffset: '2' },
      { topic: 'b', partition: 0, nextOffset: '3' },
    ]);
    await upsertCheckpoints(db(), 'g4', [{ topic: 'a', partition: 0, nextOffset: '4' }]);
    expect(await deleteCheckpoints(db(), 'g3', 'a')).toBe(2);
    expect((await readCheckpoints(db(), 'g3', 'a')).size).toBe(0);
    expect(await readCheckpoints(db(), 'g3', 'b')).toEqual(new Map([[0, 3n]]));
    expect(await readCheckpoints(db(), 'g4', 'a')).toEqual(new Map([[0, 4n]]));
  });

  it('writes nothing for an empty list', async () => {
    await upsertCheckpoints(db(), 'g5', []);
    expect((await readCheckpoints(db(), 'g5', 't')).size).toBe(0);
  });
});
