/**
 * What every fault file does with its rows: the reconciliation each row must pass, and the table
 * printed at the end (and written to a file for the record, `FAULT_REPORT`).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname } from 'node:path';
import { expect } from 'vitest';
import { formatLedger, type LedgerRow } from './faults-ledger.js';
import { EVENT_PARTITIONS, PLAN, SOAK } from './faults-run.js';

/**
 * The reconciliation every fault must pass; returns the row for fault-specific checks. Resets
 * (a keep-alive connection closed under a request, seen during restarts and on an overloaded
 * machine) are reported, not failed: the client saw no answer and retries.
 */
export function expectExact(rows: LedgerRow[], row: LedgerRow): LedgerRow {
  rows.push(row);
  expect(row.acknowledged).toBeGreaterThan(0);
  expect({ lost: row.lost, duplicates: row.duplicates, other: row.other }).toEqual({
    lost: 0,
    duplicates: 0,
    other: 0,
  });
  // Every stored event was acknowledged, or answered 503 or reset and is reported as such: a
  // refused one never is.
  expect(row.stored).toBe(row.acknowledged + row.unavailableStored + row.resetStored);
  // The load is spread over every partition of the event topic.
  expect(row.partitions).toBe(EVENT_PARTITIONS);
  return row;
}

/** The 503s of a service shedding load: its event limit (`overloaded`) or a full send queue. */
export const SHED_FAILURES = new Set(['overloaded', 'queue-full']);

/** The kinds of 503 other than shed load: a send that failed at the broker. */
export function brokerFailures(row: LedgerRow): string[] {
  return Object.keys(row.failures).filter((failure) => !SHED_FAILURES.has(failure));
}

/**
 * Prints the file's rows and, with a `path` (from `FAULT_REPORT`; make soak writes
 * bench/results/soak.md), writes them there with the run's time, machine and load.
 */
export function reportRows(opts: {
  rows: LedgerRow[];
  title: string;
  startedAt: string;
  path?: string;
  setup?: string;
}): void {
  if (opts.rows.length === 0) return;
  const table = formatLedger(opts.rows);
  const title = `${opts.title}, ${SOAK ? 'soak' : 'short'} form`;
  console.log(`\n${title}:\n${table}\n`);
  if (!opts.path) return;
  const [one, five, fifteen] = loadavg().map((l) => l.toFixed(1));
  const header = [
    `# ${title}`,
    '',
    `Run ${opts.startedAt} to ${new Date().toISOString()} on ${cpus().length} cores, Node ${process.version};`,
    `load average ${one} / ${five} / ${fifteen} at the end. Load: ${PLAN.perSecond} events/s over`,
    `${EVENT_PARTITIONS} partitions (one subject per partition).${opts.setup ? ` ${opts.setup}` : ''} Written by e2e/reliability/faults`,
    '(FAULT_REPORT); the columns are explained in e2e/reliability/README.md.',
    '',
  ];
  mkdirSync(dirname(opts.path), { recursive: true });
  writeFileSync(opts.path, `${[...header, table, ''].join('\n')}`);
}
