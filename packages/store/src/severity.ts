/**
 * The severity ordering of the event store. `events.severity_rank(text)` in migration 0001 maps the
 * same names to the same ranks; the generated column `severity_rank` and the search service's
 * severity filter both use it. A test compares this table with the SQL function.
 *
 * @example
 * severityRank('ERROR'); // 50
 * SEVERITY.error >= SEVERE_RANK; // true: has an index path (partial index)
 */
import { btrim } from './derive.js';

export const SEVERITY = {
  trace: 10,
  debug: 20,
  info: 30,
  notice: 35,
  warn: 40,
  error: 50,
  critical: 60,
  alert: 70,
  emergency: 80,
} as const;

export type SeverityName = keyof typeof SEVERITY;

/** Ranks at or above this one (error) have an index path; lower ranks scan. */
export const SEVERE_RANK = SEVERITY.error;

/** Every accepted spelling (case-insensitive) and its rank, synonyms included. */
export const SEVERITY_ALIASES: Readonly<Record<string, number>> = {
  trace: 10,
  finest: 10,
  debug: 20,
  fine: 20,
  info: 30,
  information: 30,
  informational: 30,
  notice: 35,
  warn: 40,
  warning: 40,
  error: 50,
  err: 50,
  critical: 60,
  crit: 60,
  fatal: 60,
  alert: 70,
  emergency: 80,
  emerg: 80,
  panic: 80,
};

/** Rank of a severity name, or undefined for an unknown one (stored as NULL). */
export function severityRank(name: string): number | undefined {
  // btrim, as `events.severity_rank` does: spaces only, so '\terror' is unknown in both.
  return SEVERITY_ALIASES[btrim(name).toLowerCase()];
}

/** OpenTelemetry SeverityNumber (1..24) to rank, as `events.severity_rank_of_number`. */
export function severityRankOfNumber(n: number): number | undefined {
  if (!Number.isInteger(n) || n < 1 || n > 24) return undefined;
  return [10, 20, 30, 40, 50, 60][Math.floor((n - 1) / 4)];
}

/** Canonical name of a rank (the greatest name whose rank is <= the given one). */
export function severityName(rank: number): SeverityName | undefined {
  let best: SeverityName | undefined;
  for (const [name, r] of Object.entries(SEVERITY) as [SeverityName, number][]) {
    if (r <= rank) best = name;
  }
  return best;
}
