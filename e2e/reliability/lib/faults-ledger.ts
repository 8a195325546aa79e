/**
 * The exact reconciliation that ends every fault: each event answered 200 must be in the store
 * exactly once; events answered 503 are counted, and so is how many of them were stored anyway
 * (a 503 means "not known to be durable", never "not stored"). Any other answer is a failure.
 */
import type pg from 'pg';
import type { Outcome } from './faults-load.js';
import { until } from './faults-wait.js';

export interface LedgerRow {
  fault: string;
  sent: number;
  acknowledged: number;
  unavailable: number;
  /** 503s whose event reached the store anyway (the broker had it before the deadline). */
  unavailableStored: number;
  /** Never connected (the service was down): the client knows nothing was sent. */
  refused: number;
  /** Connection closed under the request before an answer: the client cannot know. */
  reset: number;
  /** Of those, how many are in the store anyway. */
  resetStored: number;
  /** Anything else: hung, another transport error, an unexpected status. Must be 0. */
  other: number;
  stored: number;
  /** Event-topic partitions the acknowledged events went to (the ingestion service's answers). */
  partitions: number;
  duplicates: number;
  /**
   * Records the consumer found already stored and skipped while the fault ran (its meter
   * `consume_records_duplicate_total`, summed over its processes): redeliveries absorbed.
   */
  duplicatesAbsorbed: number;
  lost: number;
  /** The first lost events (to look for in the topic): id, partition and offset answered. */
  lostEvents: Pick<Outcome, 'id' | 'sentAt' | 'answeredAt' | 'partition' | 'offset'>[];
  /** Records the consumer dead-lettered while the fault ran (only the poison storm may have any). */
  deadLettered: number;
  /** From the fault's end until an event sent after it was acknowledged (ingestion back). */
  acceptingMs: number;
  /** From the fault's end until an event sent after it was acknowledged and stored. */
  recoverMs: number;
  /** The 503s by the spec's `metadata.failure`. */
  failures: Record<string, number>;
  /** The `other` answers by kind (`hung`, `broken: <code>`, a status). */
  others: Record<string, number>;
}

function tally(kinds: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const kind of kinds) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

/** How many rows each id of `source` has in the store. */
export async function storedCounts(db: pg.Pool, source: string): Promise<Map<string, number>> {
  const { rows } = await db.query<{ id: string; n: number }>(
    // sql-witness: counts what the pipeline stored under faults, in its own SQL.
    'SELECT ce_id AS id, count(*)::int AS n FROM events.cloud_event WHERE ce_source = $1 GROUP BY ce_id',
    [source],
  );
  return new Map(rows.map((r) => [r.id, r.n]));
}

/**
 * Waits (at most `settleMs`) until every acknowledged event of `source` is stored, then counts.
 * The wait ends early only when nothing is missing, so `lost` is what was still missing after it.
 */
export async function reconcile(opts: {
  db: pg.Pool;
  fault: string;
  source: string;
  outcomes: Outcome[];
  endedAt: number;
  recoverMs: number;
  deadLettered: () => Promise<number>;
  duplicatesAbsorbed: () => Promise<number>;
  settleMs: number;
}): Promise<LedgerRow> {
  const acked = opts.outcomes.filter((o) => o.answer === 200);
  const missing = async () => {
    const stored = await storedCounts(opts.db, opts.source);
    return acked.filter((o) => !stored.has(o.id)).length;
  };
  await until(
    `${opts.fault}: every acknowledged event stored`,
    async () => (await missing()) === 0,
    opts.settleMs,
  ).catch(() => {});
  const stored = await storedCounts(opts.db, opts.source);
  const unavailable = opts.outcomes.filter((o) => o.answer === 503);
  const firstAccepted = Math.min(...acked.filter((o) => o.sentAt >= opts.endedAt).map((o) => o.sentAt));
  const reset = opts.outcomes.filter((o) => o.answer === 'reset');
  const others = opts.outcomes.filter(
    (o) => o.answer !== 200 && o.answer !== 503 && o.answer !== 'refused' && o.answer !== 'reset',
  );
  return {
    fault: opts.fault,
    sent: opts.outcomes.length,
    acknowledged: acked.length,
    unavailable: unavailable.length,
    unavailableStored: unavailable.filter((o) => stored.has(o.id)).length,
    refused: opts.outcomes.filter((o) => o.answer === 'refused').length,
    reset: reset.length,
    resetStored: reset.filter((o) => stored.has(o.id)).length,
    other: others.length,
    stored: stored.size,
    partitions: new Set(acked.map((o) => o.partition)).size,
    duplicates: [...stored.values()].filter((n) => n > 1).length,
    lost: acked.filter((o) => !stored.has(o.id)).length,
    lostEvents: acked
      .filter((o) => !stored.has(o.id))
      .slice(0, 10)
      .map(({ id, sentAt, answeredAt, partition, offset }) => ({
        id,
        sentAt,
        answeredAt,
        partition,
        offset,
      })),
    deadLettered: await opts.deadLettered(),
    duplicatesAbsorbed: await opts.duplicatesAbsorbed(),
    acceptingMs: Math.max(0, firstAccepted - opts.endedAt),
    recoverMs: opts.recoverMs,
    failures: tally(unavailable.map((o) => o.failure ?? 'none')),
    others: tally(others.map((o) => (o.detail ? `${o.answer}: ${o.detail}` : String(o.answer)))),
  };
}

type Column = Exclude<keyof LedgerRow, 'failures' | 'others' | 'lostEvents'>;

const COLUMNS: [Column, string][] = [
  ['fault', 'fault'],
  ['sent', 'sent'],
  ['acknowledged', 'acked (200)'],
  ['unavailable', '503'],
  ['unavailableStored', '503 stored'],
  ['refused', 'refused'],
  ['reset', 'reset'],
  ['resetStored', 'reset stored'],
  ['other', 'other'],
  ['stored', 'stored'],
  ['partitions', 'partitions'],
  ['duplicates', 'duplicates'],
  ['duplicatesAbsorbed', 'dup. absorbed'],
  ['lost', 'lost'],
  ['deadLettered', 'dead-lettered'],
  ['acceptingMs', 'accepting (s)'],
  ['recoverMs', 'recover (s)'],
];

const seconds = (ms: number) => (ms / 1000).toFixed(1);

const kinds = (counts: Record<string, number>) =>
  Object.entries(counts)
    .map(([kind, n]) => `${kind} ${n}`)
    .join(', ');

/** The rows as a Markdown table (the README quotes it as printed). */
export function formatLedger(rows: LedgerRow[]): string {
  const cells = rows.map((row) =>
    COLUMNS.map(([key]) => (key.endsWith('Ms') ? seconds(row[key] as number) : String(row[key]))),
  );
  const widths = COLUMNS.map(([, title], i) =>
    Math.max(title.length, ...cells.map((c) => c[i]?.length ?? 0)),
  );
  const line = (values: string[]) =>
    `| ${values.map((v, i) => (i === 0 ? v.padEnd(widths[i] ?? 0) : v.padStart(widths[i] ?? 0))).join(' | ')} |`;
  return [
    line(COLUMNS.map(([, title]) => title)),
    `|${widths.map((w, i) => (i === 0 ? `-${'-'.repeat(w)}-` : `-${'-'.repeat(w - 1)}:-`)).join('|')}|`,
    ...cells.map(line),
    ...rows.flatMap((row) => [
      ...(row.unavailable > 0 ? [`503 of ${row.fault} by failure: ${kinds(row.failures)}`] : []),
      ...(row.other > 0 ? [`other answers of ${row.fault}: ${kinds(row.others)}`] : []),
      ...row.lostEvents.map(
        (e) =>
          `lost in ${row.fault}: ${e.id}, partition ${e.partition} offset ${e.offset}, sent ${new Date(e.sentAt).toISOString()}, answered after ${e.answeredAt - e.sentAt} ms`,
      ),
    ]),
  ].join('\n');
}
