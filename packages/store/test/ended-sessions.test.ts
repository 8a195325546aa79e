/**
 * Ended login sessions (migration 0021) with the three roles: the search's reader records a
 * session as ended through its read-only pool and reads the records back, all or since a time; a
 * record is needed until its session's expiry, so the reader deletes records of expired sessions
 * and no others, neither through the store's function nor by a statement of its own.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sqlstateOf } from '../src/errors.js';
import { type DatabasePool, readEndedSessions, recordEndedSession } from '../src/index.js';
import { useRoleDatabase } from './scoped-roles.js';

const db = useRoleDatabase('store_ended');

const digest = () => randomBytes(32).toString('base64url');
const inHours = (hours: number) => new Date(Date.now() + hours * 3_600_000);

describe('ended sessions', () => {
  it('are recorded by the reader, once each, and read back: all, or those ended since a time', async () => {
    const first = digest();
    const second = digest();
    await recordEndedSession(db.reader, first, inHours(8));
    await recordEndedSession(db.reader, first, inHours(8)); // a second logout of the same cookie
    const all = await readEndedSessions(db.reader);
    expect(all.filter((e) => e.id === first)).toHaveLength(1);
    const since = all.find((e) => e.id === first)!.endedAt;
    await recordEndedSession(db.reader, second, inHours(1));
    const later = await readEndedSessions(db.reader, new Date(since.getTime() + 1));
    expect(later.map((e) => e.id)).toEqual([second]);
    expect(later[0]!.expiresAt.getTime()).toBeGreaterThan(Date.now());
  });

  it('are kept until their session expires: the next record deletes the expired ones, the reader no others', async () => {
    const expired = digest();
    const live = digest();
    // A record whose session has expired since (the owner writes the past; the reader's own
    // statements could, but the point is what the reader may delete).
    await db.owner.query(
      `INSERT INTO events.ended_session (session_id, expires_at) VALUES ($1, now() - interval '1 minute')`,
      [expired],
    );
    await recordEndedSession(db.reader, live, inHours(8));
    const { rows } = await db.owner.query<{ session_id: string }>(
      'SELECT session_id FROM events.ended_session WHERE session_id = ANY($1)',
      [[expired, live]],
    );
    expect(rows.map((r) => r.session_id)).toEqual([live]);
    expect((await readEndedSessions(db.reader)).map((e) => e.id)).not.toContain(expired);

    // The reader's own DELETE of a live record deletes nothing (row-level security), in a
    // transaction that may write, as the store's own statement runs.
    const client = await db.reader.connect();
    try {
      await client.query('BEGIN READ WRITE');
      const { rowCount } = await client.query('DELETE FROM events.ended_session WHERE session_id = $1', [
        live,
      ]);
      await client.query('COMMIT');
      expect(rowCount).toBe(0);
    } finally {
      client.release();
    }
    expect((await readEndedSessions(db.reader)).map((e) => e.id)).toContain(live);
  });

  it('are not recorded by the writer role (no grant), nor through a read-only transaction', async () => {
    /** The SQLSTATE of a record added by a statement of `pool`'s own, outside any transaction. */
    const refusal = async (pool: DatabasePool) => {
      const client = await pool.connect();
      try {
        return await client
          .query(
            `INSERT INTO events.ended_session (session_id, expires_at) VALUES ($1, now() + interval '1 hour')`,
            [digest()],
          )
          .then(() => undefined, sqlstateOf);
      } finally {
        client.release();
      }
    };
    expect(await refusal(db.writer)).toBe('42501'); // insufficient_privilege
    expect(await refusal(db.reader)).toBe('25006'); // read_only_sql_transaction: the read pool's default
  });
});
