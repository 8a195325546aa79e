/**
 * One fault under load: the steady load starts, the fault begins, lasts, ends; the suite measures
 * the time until an event sent after the end is acknowledged and stored, lets the load run a little
 * longer, stops it and reconciles every answer against the store.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { formatLedger, type LedgerRow, reconcile } from './faults-ledger.js';
import { type Load, type Outcome, startLoad, subjectsCoveringPartitions } from './faults-load.js';
import type { Pipeline } from './faults-pipeline.js';
import { until } from './faults-wait.js';

/** `FAULT_SOAK=1` (make soak): minutes per fault; otherwise a few seconds (make test). */
export const SOAK = process.env.FAULT_SOAK === '1';

/**
 * Events a second of the steady load (`FAULT_RATE` overrides): 100 in the short form, 1,000 in the
 * soak. Chosen from bench/results: one ingestion process takes about 80 µs of CPU a single event
 * and the consumer's chain (consumer, PostgreSQL, Kafka) about 100 µs a row, so 1,000/s keeps the
 * pipeline near a tenth of the 2-core machine beside the load generator, leaving headroom for the
 * faults' backlogs (a 60 s broker outage is 60,000 events to catch up). The short form runs inside
 * `make test` on a machine that may be shared: at 200/s and a load average near 30, one run in
 * three drew 408s and hung requests during the broker kill (the listener could not read requests
 * within 10 s), so a tenth of the soak's rate.
 */
const RATE = Number(process.env.FAULT_RATE ?? (SOAK ? 1_000 : 100));
if (!Number.isInteger(RATE) || RATE < 1)
  throw new Error(`FAULT_RATE must be a positive integer (events a second), got ${process.env.FAULT_RATE}`);

/**
 * The ingestion send queue (`BROKER_QUEUE_CAPACITY`) the suite sets: a quarter second of the load
 * (at least 32, so a burst of a few hundred requests fills it). The queue holds the records
 * awaiting their broker's acknowledgement, so it also caps the rate one process takes: 32 records
 * refused two thirds of a 1,000/s load, every delivery taking about 0.1 s.
 */
export const INGEST_QUEUE_CAPACITY = Math.max(32, 2 ** Math.ceil(Math.log2(RATE / 4)));

/** Partitions of the event topic: the load's subjects cover every one of them. */
export const EVENT_PARTITIONS = 12;

export const PLAN = SOAK
  ? {
      perSecond: RATE,
      leadMs: 30_000,
      tailMs: 60_000,
      outageMs: 60_000,
      postgresOutageMs: 30_000,
      slowMs: 180_000,
      rebalanceMs: 120_000,
    }
  : {
      perSecond: RATE,
      leadMs: 2_000,
      tailMs: 2_000,
      outageMs: 5_000,
      postgresOutageMs: 5_000,
      slowMs: 5_000,
      rebalanceMs: 3_000,
    };

/** Bounds that hold in both forms: no fault, recovery or reconciliation waits longer. */
const RECOVER_TIMEOUT_MS = 120_000;
const SETTLE_MS = 60_000;
const REQUEST_TIMEOUT_MS = 30_000;
const LOAD_CAP_MS = SOAK ? 15 * 60_000 : 4 * 60_000;

export interface Fault {
  name: string;
  /** Begins the fault (the load is already running). */
  begin(load: Load): Promise<void>;
  /** How long the fault lasts between `begin` and `end`. */
  holdMs: number;
  /** Ends the fault: the broken part is back (or the disturbance is gone). */
  end(load: Load): Promise<void>;
}

export interface FaultRun {
  row: LedgerRow;
  load: Load;
}

async function isStored(db: pg.Pool, source: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query(
    // sql-witness: checks that an acknowledged event was stored, in its own SQL.
    'SELECT 1 FROM events.cloud_event WHERE ce_source = $1 AND ce_id = $2',
    [source, id],
  );
  return (rowCount ?? 0) > 0;
}

/** From `endedAt` until the first event sent after it that was acknowledged is in the store. */
async function timeToRecover(p: Pipeline, load: Load, source: string, endedAt: number): Promise<number> {
  const firstAcked = () =>
    load.outcomes
      .filter((o) => o.sentAt >= endedAt && o.answer === 200)
      .sort((a, b) => a.sentAt - b.sentAt)[0];
  await until(
    'an event sent after the fault acknowledged and stored',
    async () => {
      const first = firstAcked();
      return first !== undefined && (await isStored(p.db, source, first.id));
    },
    RECOVER_TIMEOUT_MS,
  ).catch((error: Error) => {
    // Which side did not recover: ingest (no 200 since the end) or the consumer (a 200 not stored).
    throw new Error(`${error.message}; since the end: ${answersSince(load, endedAt, firstAcked())}`);
  });
  return Date.now() - endedAt;
}

/** The load's answers to events sent since `endedAt`, counted by answer (and 503 failure). */
function answersSince(load: Load, endedAt: number, firstAcked: Outcome | undefined): string {
  const counts = new Map<string, number>();
  for (const o of load.outcomes) {
    if (o.sentAt < endedAt) continue;
    const key = o.failure ? `${o.answer} ${o.failure}` : String(o.answer);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const answers = [...counts].map(([key, n]) => `${key}: ${n}`).join(', ') || 'no answer';
  return firstAcked
    ? `${answers}; the first acknowledged, ${firstAcked.id} (partition ${firstAcked.partition}, offset ${firstAcked.offset}), is not stored`
    : answers;
}

export async function runFault(p: Pipeline, runId: string, fault: Fault): Promise<FaultRun> {
  const source = `urn:faults:${runId}:${fault.name.replace(/[^a-z0-9]+/gi, '-')}`;
  const load = startLoad({
    url: () => p.ingest.url,
    token: p.token,
    source,
    perSecond: PLAN.perSecond,
    subjects: subjectsCoveringPartitions(source, EVENT_PARTITIONS),
    maxMs: LOAD_CAP_MS,
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
  });
  const deadLettersBefore = await p.deadLetters();
  const absorbedBefore = await p.duplicatesAbsorbed();
  // Once begun, a fault is ended even when its test fails: a store left read-only or an ingestion
  // service left stopped would fail every later fault of the file for a reason not its own.
  let endDue = false;
  try {
    await sleep(PLAN.leadMs);
    endDue = true;
    await fault.begin(load);
    await sleep(fault.holdMs);
    endDue = false;
    await fault.end(load);
    const endedAt = Date.now();
    const recoverMs = await timeToRecover(p, load, source, endedAt);
    await sleep(PLAN.tailMs);
    const outcomes = await load.stop();
    const row = await reconcile({
      db: p.db,
      fault: fault.name,
      source,
      outcomes,
      endedAt,
      recoverMs,
      deadLettered: async () => (await p.deadLetters()) - deadLettersBefore,
      duplicatesAbsorbed: async () => (await p.duplicatesAbsorbed()) - absorbedBefore,
      settleMs: SETTLE_MS,
    });
    console.log(`\n${formatLedger([row])}\n`);
    return { row, load };
  } finally {
    if (endDue) {
      await fault
        .end(load)
        .catch((error: Error) => console.error(`ending ${fault.name} failed: ${error.message}`));
    }
    await load.stop();
  }
}
