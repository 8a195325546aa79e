/**
 * Saved searches (migration 0013) with the three roles: the search's reader saves, replaces, lists
 * and deletes a viewer's searches through its read-only pool; a viewer never sees nor touches
 * another's, neither through the store's functions nor by a statement of its own (row-level
 * security); the bounds hold in the table and per viewer, also for two saves at once.
 */
import { describe, expect, it } from 'vitest';
import { sqlstateOf } from '../src/errors.js';
import {
  createReadPool,
  deleteSavedSearch,
  listSavedSearches,
  renameSavedSearch,
  SAVED_SEARCH_LIMITS,
  saveSearch,
} from '../src/index.js';
import { useRoleDatabase } from './scoped-roles.js';

const db = useRoleDatabase('store_saved');

/** The SQLSTATE `work` fails with, drizzle's wrapping or not (undefined when it succeeds). */
async function sqlstate(work: Promise<unknown>): Promise<string | undefined> {
  try {
    await work;
    return undefined;
  } catch (err) {
    return sqlstateOf(err);
  }
}

const names = async (viewer: string) => (await listSavedSearches(db.reader, viewer)).map((s) => s.name);

describe('a viewer', () => {
  it('saves, replaces by name, lists by name and deletes their searches with the reader role', async () => {
    const first = await saveSearch(db.reader, 'ann', 'zeta', 'q=failed');
    expect(first).toMatchObject({ saved: { name: 'zeta', params: 'q=failed' } });
    await saveSearch(db.reader, 'ann', 'alpha', 'type=com.a');
    const replaced = await saveSearch(db.reader, 'ann', 'zeta', 'q=failed&range=7d');
    expect(replaced).toMatchObject({ saved: { name: 'zeta', params: 'q=failed&range=7d' } });
    const listed = await listSavedSearches(db.reader, 'ann');
    expect(listed.map((s) => [s.name, s.params])).toEqual([
      ['alpha', 'type=com.a'],
      ['zeta', 'q=failed&range=7d'],
    ]);
    const alpha = listed[0]!;
    expect(await deleteSavedSearch(db.reader, 'ann', alpha.id)).toBe(true);
    expect(await deleteSavedSearch(db.reader, 'ann', alpha.id)).toBe(false);
    expect(await names('ann')).toEqual(['zeta']);
  });

  it("never sees, replaces nor deletes another viewer's searches", async () => {
    const saved = await saveSearch(db.reader, 'bea', 'mine', 'q=bea');
    if (!('saved' in saved)) throw new Error('not saved');
    await saveSearch(db.reader, 'cal', 'mine', 'q=cal');
    expect(await deleteSavedSearch(db.reader, 'cal', saved.saved.id)).toBe(false);
    expect((await listSavedSearches(db.reader, 'bea')).map((s) => s.params)).toEqual(['q=bea']);
    expect((await listSavedSearches(db.reader, 'cal')).map((s) => s.params)).toEqual(['q=cal']);
  });

  it("renames their search, not to a name they have, and not another viewer's", async () => {
    const saved = await saveSearch(db.reader, 'ivy', 'old', 'q=ivy');
    await saveSearch(db.reader, 'ivy', 'kept', 'q=kept');
    await saveSearch(db.reader, 'jon', 'free', 'q=jon');
    if (!('saved' in saved)) throw new Error('not saved');
    const { id } = saved.saved;
    expect(await renameSavedSearch(db.reader, 'ivy', id, 'kept')).toBe('taken');
    expect(await renameSavedSearch(db.reader, 'jon', id, 'stolen')).toBe('missing');
    expect(await renameSavedSearch(db.reader, 'ivy', id, 'free')).toBe('renamed');
    expect(await renameSavedSearch(db.reader, 'ivy', id, 'free')).toBe('renamed');
    expect(await names('ivy')).toEqual(['free', 'kept']);
    expect(await names('jon')).toEqual(['free']);
  });
});

describe('row-level security', () => {
  it("admits a statement of the reader to its transaction's viewer's rows only", async () => {
    await saveSearch(db.reader, 'dan', 'kept', 'q=dan');
    const client = await db.reader.connect();
    try {
      // No viewer: nothing, whatever the statement says.
      const none = await client.query("SELECT name FROM events.saved_search WHERE owner = 'dan'");
      expect(none.rows).toEqual([]);
      await client.query("BEGIN READ WRITE; SELECT set_config('observatory.viewer', 'eve', true)");
      const other = await client.query(
        "UPDATE events.saved_search SET params = 'stolen' WHERE owner = 'dan' RETURNING id",
      );
      expect(other.rowCount).toBe(0);
      expect((await client.query("DELETE FROM events.saved_search WHERE owner = 'dan'")).rowCount).toBe(0);
      // A row for someone else is refused by the policy's check.
      expect(
        await sqlstate(
          client.query("INSERT INTO events.saved_search (owner, name, params) VALUES ('dan', 'x', '')"),
        ),
      ).toBe('42501');
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
    expect((await listSavedSearches(db.reader, 'dan')).map((s) => s.params)).toEqual(['q=dan']);
  });

  it('leaves the owner of the table, which migrates, every row', async () => {
    await saveSearch(db.reader, 'fay', 'owned', 'q=fay');
    const { rows } = await db.owner.query("SELECT params FROM events.saved_search WHERE owner = 'fay'");
    expect(rows).toEqual([{ params: 'q=fay' }]);
  });
});

describe('bounds', () => {
  it('refuses in the table a name out of 1..100 characters and parameters over 2048 bytes', async () => {
    const { nameChars, paramsBytes } = SAVED_SEARCH_LIMITS;
    expect(await sqlstate(saveSearch(db.reader, 'gus', '', 'q=x'))).toBe('23514');
    expect(await sqlstate(saveSearch(db.reader, 'gus', 'é'.repeat(nameChars + 1), 'q=x'))).toBe('23514');
    expect(await sqlstate(saveSearch(db.reader, 'gus', 'é'.repeat(nameChars), 'q=x'))).toBeUndefined();
    expect(await sqlstate(saveSearch(db.reader, 'gus', 'long', 'q='.padEnd(paramsBytes + 1, 'x')))).toBe(
      '23514',
    );
    expect(
      await sqlstate(saveSearch(db.reader, 'gus', 'long', 'q='.padEnd(paramsBytes, 'x'))),
    ).toBeUndefined();
  });

  it('keeps a viewer to the limit, replacing a name at the limit, also for two saves at once', async () => {
    await saveSearch(db.reader, 'hal', 'one', 'q=1', 3);
    await saveSearch(db.reader, 'hal', 'two', 'q=2', 3);
    const pool = createReadPool({ url: db.roles.reader.url, max: 2 });
    try {
      const both = await Promise.all([
        saveSearch(pool, 'hal', 'three', 'q=3', 3),
        saveSearch(pool, 'hal', 'four', 'q=4', 3),
      ]);
      expect(both.filter((o) => 'full' in o)).toHaveLength(1);
    } finally {
      await pool.end();
    }
    expect(await names('hal')).toHaveLength(3);
    expect(await saveSearch(db.reader, 'hal', 'five', 'q=5', 3)).toEqual({ full: true });
    expect(await saveSearch(db.reader, 'hal', 'one', 'q=one', 3)).toMatchObject({
      saved: { params: 'q=one' },
    });
  });
});
