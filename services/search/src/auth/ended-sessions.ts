/**
 * The login sessions ended before their expiry, shared by every search replica through the store
 * (`events.ended_session`, packages/store). A session is a sealed cookie that carries its own
 * expiry, so without this a copy of the cookie kept from before a logout would go on opening it.
 * Each replica holds the records in memory and, when its last read is older than `refreshMs`,
 * reads those ended since before it answers: a session ended on one replica is refused there at
 * once and by the others within `refreshMs`.
 */
import type { Logger } from '@event-observatory/service-kit/logger';
import { type DatabasePool, readEndedSessions, recordEndedSession } from '@event-observatory/store';

export interface EndedSessions {
  /** Whether the session `id` was ended (reading new records first when due). */
  isEnded(id: string): Promise<boolean>;
  /** Records the session `id` as ended until `expiresAt` (ms): refused here from now on. */
  end(id: string, expiresAt: number): Promise<void>;
}

export interface EndedSessionsOptions {
  /** The longest a replica goes on accepting a session another replica ended; default 5 s. */
  refreshMs?: number;
  logger?: Logger;
  now?: () => number;
}

export const ENDED_SESSIONS_REFRESH_MS = 5_000;
/**
 * Each read asks again for the records ended this long before the newest one it has: a record
 * that committed after a later one (its transaction took longer) is still found.
 */
const COMMIT_SLACK_MS = 60_000;

export function endedSessions(pool: DatabasePool, opts: EndedSessionsOptions = {}): EndedSessions {
  const refreshMs = opts.refreshMs ?? ENDED_SESSIONS_REFRESH_MS;
  const now = opts.now ?? Date.now;
  /** Session id -> when it would have expired (ms). */
  const ended = new Map<string, number>();
  let newest: Date | undefined;
  let readAt = Number.NEGATIVE_INFINITY;
  let reading: Promise<void> | undefined;

  const read = async () => {
    const started = now();
    try {
      const since = newest && new Date(newest.getTime() - COMMIT_SLACK_MS);
      for (const record of await readEndedSessions(pool, since)) {
        ended.set(record.id, record.expiresAt.getTime());
        if (!newest || record.endedAt > newest) newest = record.endedAt;
      }
      for (const [id, expiresAt] of ended) if (expiresAt <= started) ended.delete(id);
    } catch (err) {
      // The store is away: its pages fail too. The records read last go on being applied.
      opts.logger?.warn({ err }, 'ended sessions could not be read');
    } finally {
      readAt = started;
    }
  };

  return {
    async isEnded(id) {
      if (now() - readAt >= refreshMs) {
        reading ??= read().finally(() => {
          reading = undefined;
        });
        await reading;
      }
      return ended.has(id);
    },
    async end(id, expiresAt) {
      ended.set(id, expiresAt);
      await recordEndedSession(pool, id, new Date(expiresAt));
    },
  };
}
