/**
 * The plausible window of an event's `time`, the same for every part of the pipeline: ingest
 * refuses a time outside it whatever its configured skews, the consumer dead-letters one
 * (`invalid-attributes`), and search answers 400 to a `from`/`to` outside it. One window, so a
 * stored event is always one that search can reach, and a search bound never asks the store for
 * centuries of empty partitions.
 *
 * - Earliest: 1970-01-01T00:00:00Z, the Unix epoch. No CloudEvents producer's clock legitimately
 *   reads earlier; a time before it is a zero or truncated value (`0001-01-01`, `0050-…`).
 * - Latest: the clock plus `MAX_AHEAD_MS` (7 days). Ingest's future skew defaults to 24 h; the rest
 *   is margin for a consumer or search pod whose clock is behind ingest's, and for a search whose
 *   `to` ends a little ahead of now.
 *
 * @example
 * plausibleTimeProblem(Date.UTC(50, 0, 1), Date.now()); // 'before 1970-01-01T00:00:00.000Z'
 */

/** The earliest plausible event time, epoch milliseconds (1970-01-01T00:00:00Z). */
export const EARLIEST_EVENT_TIME_MS = 0;
/** How far past the clock an event time may be: ingest's largest future skew plus margin. */
export const MAX_AHEAD_MS = 7 * 86_400_000;

/** The window's bounds at `nowMs`, both inclusive. */
export function plausibleWindow(nowMs: number): { earliest: Date; latest: Date } {
  return { earliest: new Date(EARLIEST_EVENT_TIME_MS), latest: new Date(nowMs + MAX_AHEAD_MS) };
}

/** Why `ms` is outside the window at `nowMs` ("before …" / "after …"), or undefined inside it. */
export function plausibleTimeProblem(ms: number, nowMs: number): string | undefined {
  const { earliest, latest } = plausibleWindow(nowMs);
  if (!(ms >= earliest.getTime())) return `before ${earliest.toISOString()}`;
  if (ms > latest.getTime())
    return `after ${latest.toISOString()} (the clock plus ${MAX_AHEAD_MS / 86_400_000} days)`;
  return undefined;
}
