/**
 * Every statement on `events.ended_session` (migration 0021): the search UI's login sessions ended
 * before their expiry. A session is a sealed cookie that carries its own expiry, so a logout
 * records the session's digest here, and every search replica reads the records and refuses those
 * sessions. The read pool's sessions are read-only by default; the record's transaction asks for
 * READ WRITE (the reader role may add rows and delete expired ones, grants.ts), so on a streaming
 * replica it fails and nothing is recorded.
 *
 * @example
 * await recordEndedSession(pool, sessionDigest, expiresAt);
 * const ended = await readEndedSessions(pool, lastRead); // [{ id, expiresAt, endedAt }, ...]
 */
import { and, asc, gt, gte, lt, sql } from 'drizzle-orm';
import { orm } from './orm.js';
import type { DatabasePool } from './queryable.js';
import { endedSession } from './schema.js';
import { inPooledTransaction } from './transactions.js';

export interface EndedSession {
  /** The session's digest. */
  id: string;
  /** When the session would have expired: the record matters until then. */
  expiresAt: Date;
  endedAt: Date;
}

/** Records the session `id` as ended (again: no change), and deletes the records of expired sessions. */
export function recordEndedSession(pool: DatabasePool, id: string, expiresAt: Date): Promise<void> {
  return inPooledTransaction(pool, async (client) => {
    // SET TRANSACTION must come before the transaction's first query.
    await client.query('SET TRANSACTION READ WRITE');
    const db = orm(client);
    await db.insert(endedSession).values({ sessionId: id, expiresAt }).onConflictDoNothing();
    await db.delete(endedSession).where(lt(endedSession.expiresAt, sql`now()`));
  });
}

/** The records of sessions not yet expired, ended at `since` or later (all without it), oldest first. */
export function readEndedSessions(pool: DatabasePool, since?: Date): Promise<EndedSession[]> {
  const unexpired = gt(endedSession.expiresAt, sql`now()`);
  return orm(pool)
    .select({ id: endedSession.sessionId, expiresAt: endedSession.expiresAt, endedAt: endedSession.endedAt })
    .from(endedSession)
    .where(since ? and(unexpired, gte(endedSession.endedAt, since)) : unexpired)
    .orderBy(asc(endedSession.endedAt));
}
