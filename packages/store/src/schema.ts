/**
 * The one typed description of the tables of the `events` schema: every table the migrations
 * create (and the runner's `schema_migration`), column by column, with types, nullability,
 * defaults, generated columns, keys and checks. test/schema.test.ts compares it with what the
 * migrations create, so the two cannot drift apart. The DDL itself (partitioning, indexes, the
 * functions behind the generated columns) lives in the SQL files of `migrations/`; generated
 * columns are declared with `generatedAlwaysAs` so inserts never try to write them.
 */
import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  customType,
  date,
  doublePrecision,
  integer,
  jsonb,
  pgSchema,
  primaryKey,
  smallint,
  text,
  timestamp,
  unique,
  uuid,
} from 'drizzle-orm/pg-core';

export const eventsSchema = pgSchema('events');

/**
 * The `producer` column: the `observatory-producer` header ingest writes (`packages/events`,
 * `producer.ts`), after the CloudEvents Auth Context extension.
 */
export interface EventProducerIdentity {
  /** `service_account`, `unknown`, `unauthenticated` (or what another writer put). */
  authtype: string;
  /** The token's subject. */
  authid?: string;
  issuer?: string;
  /** A Kubernetes service account's namespace. */
  namespace?: string;
}

/** PostgreSQL `tsvector`, read as its text form. */
const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });

const tstz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const cloudEvent = eventsSchema.table(
  'cloud_event',
  {
    occurredAt: tstz('occurred_at').notNull(),
    ceSource: text('ce_source').notNull(),
    ceId: text('ce_id').notNull(),
    ceType: text('ce_type').notNull(),
    ceSpecversion: text('ce_specversion').notNull().default('1.0'),
    ceSubject: text('ce_subject'),
    ceDatacontenttype: text('ce_datacontenttype'),
    ceDataschema: text('ce_dataschema'),
    partitionKey: text('partition_key'),
    raw: jsonb('raw').$type<Record<string, unknown>>().notNull(),
    data: jsonb('data'),
    extensions: jsonb('extensions').$type<Record<string, unknown>>().notNull().default({}),
    /** Filled by the writer with `deviceIdOf` (see derive.ts). */
    deviceId: text('device_id'),
    severityRank: smallint('severity_rank').generatedAlwaysAs(sql`events.severity_rank_of(extensions, data)`),
    /** Filled by the writer with `tagsOf` (see derive.ts). */
    tags: text('tags').array().notNull().default(sql`'{}'::text[]`),
    searchDoc: tsvector('search_doc').generatedAlwaysAs(
      sql`events.search_doc(ce_type, ce_source, ce_subject, device_id, tags, data)`,
    ),
    eventUid: uuid('event_uid').notNull().defaultRandom(),
    brokerTopic: text('broker_topic'),
    brokerPartition: integer('broker_partition'),
    brokerOffset: bigint('broker_offset', { mode: 'number' }),
    ingestedAt: tstz('ingested_at').notNull().defaultNow(),
    /** Who sent the event to ingest (migration 0010); null when unknown. */
    producer: jsonb('producer').$type<EventProducerIdentity>(),
  },
  (t) => [unique('cloud_event_identity').on(t.occurredAt, t.ceSource, t.ceId)],
);

export const consumerCheckpoint = eventsSchema.table(
  'consumer_checkpoint',
  {
    consumerGroup: text('consumer_group').notNull(),
    topic: text('topic').notNull(),
    partition: integer('partition').notNull(),
    nextOffset: bigint('next_offset', { mode: 'bigint' }).notNull(),
    updatedAt: tstz('updated_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.consumerGroup, t.topic, t.partition] })],
);

export const eventRollupHourly = eventsSchema.table(
  'event_rollup_hourly',
  {
    bucketStart: tstz('bucket_start').notNull(),
    ceType: text('ce_type').notNull(),
    ceSource: text('ce_source').notNull(),
    eventCount: bigint('event_count', { mode: 'number' }).notNull(),
    errorCount: bigint('error_count', { mode: 'number' }).notNull().default(0),
    maxSeverityRank: smallint('max_severity_rank'),
    refreshedAt: tstz('refreshed_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.bucketStart, t.ceType, t.ceSource] })],
);

/**
 * The names catalog (migration 0012): every (source, type, producer) an event of the month carried,
 * written by a trigger on `cloud_event`, read by the search to match words against names under the
 * reader's scope (event-search.ts, `withWordParts`).
 */
export const eventName = eventsSchema.table(
  'event_name',
  {
    /** The first day of the event's month, UTC. */
    month: date('month', { mode: 'string' }).notNull(),
    ceSource: text('ce_source').notNull(),
    ceType: text('ce_type').notNull(),
    /** The producer's `authid` and `namespace`, either maybe null. */
    producerIds: text('producer_ids').array().notNull(),
  },
  (t) => [primaryKey({ columns: [t.month, t.ceSource, t.ceType, t.producerIds] })],
);

/**
 * A viewer's named search (migration 0013): the query string of a search URL, nothing else.
 * Row-level security admits only the rows of the transaction's viewer (saved-searches.ts).
 */
export const savedSearch = eventsSchema.table(
  'saved_search',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /** The viewer's stable subject (the search service's `Viewer.subject`). */
    owner: text('owner').notNull(),
    name: text('name').notNull(),
    /** The search URL's filter parameters, as a query string. */
    params: text('params').notNull(),
    createdAt: tstz('created_at').notNull().defaultNow(),
  },
  (t) => [
    unique('saved_search_owner_name_key').on(t.owner, t.name),
    check('saved_search_owner_check', sql`octet_length(${t.owner}) BETWEEN 1 AND 512`),
    check('saved_search_name_check', sql`char_length(${t.name}) BETWEEN 1 AND 100`),
    check('saved_search_params_check', sql`octet_length(${t.params}) <= 2048`),
  ],
);

/**
 * A search login session ended before its expiry (migration 0021): its digest, never the cookie.
 * Row-level security lets the reader add rows and delete only expired ones (ended-sessions.ts).
 */
export const endedSession = eventsSchema.table(
  'ended_session',
  {
    sessionId: text('session_id').primaryKey(),
    expiresAt: tstz('expires_at').notNull(),
    endedAt: tstz('ended_at').notNull().default(sql`clock_timestamp()`),
  },
  (t) => [check('ended_session_session_id_check', sql`octet_length(${t.sessionId}) BETWEEN 16 AND 64`)],
);

/** The refresh's bookkeeping: one row, where the next rollup refresh resumes. */
/** The hourly rollup summed over types and sources (migration 0015), kept by triggers on it. */
export const eventRollupHourTotal = eventsSchema.table('event_rollup_hour_total', {
  bucketStart: tstz('bucket_start').primaryKey(),
  eventCount: bigint('event_count', { mode: 'number' }).notNull(),
  errorCount: bigint('error_count', { mode: 'number' }).notNull(),
});

/** The hourly rollup summed per day (UTC), type and source (migration 0020), kept by triggers on it. */
export const eventRollupDaily = eventsSchema.table(
  'event_rollup_daily',
  {
    bucketStart: tstz('bucket_start').notNull(),
    ceType: text('ce_type').notNull(),
    ceSource: text('ce_source').notNull(),
    eventCount: bigint('event_count', { mode: 'number' }).notNull(),
    errorCount: bigint('error_count', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.bucketStart, t.ceType, t.ceSource] })],
);

export const eventRollupWatermark = eventsSchema.table(
  'event_rollup_watermark',
  {
    singleton: boolean('singleton').primaryKey().default(true),
    ingestedFrom: tstz('ingested_from').notNull(),
    newestIngestedAt: tstz('newest_ingested_at'),
    refreshedAt: tstz('refreshed_at').notNull(),
  },
  (t) => [check('event_rollup_watermark_singleton_check', sql`${t.singleton}`)],
);

export const maintenanceRun = eventsSchema.table(
  'maintenance_run',
  {
    id: bigint('id', { mode: 'bigint' }).primaryKey().generatedAlwaysAsIdentity(),
    job: text('job', { enum: ['partition-maintenance', 'rollup-refresh'] }).notNull(),
    outcome: text('outcome', { enum: ['success', 'failure', 'skipped'] }).notNull(),
    startedAt: tstz('started_at').notNull(),
    durationSeconds: doublePrecision('duration_seconds').notNull(),
    partitionsCreated: integer('partitions_created').notNull().default(0),
    partitionsDetached: integer('partitions_detached').notNull().default(0),
    partitionsBlocked: integer('partitions_blocked'),
    headroomMonths: integer('headroom_months'),
    defaultRows: bigint('default_rows', { mode: 'number' }),
    hoursRefreshed: integer('hours_refreshed'),
    error: text('error'),
  },
  (t) => [
    check('maintenance_run_job_check', sql`${t.job} IN ('partition-maintenance', 'rollup-refresh')`),
    check('maintenance_run_outcome_check', sql`${t.outcome} IN ('success', 'failure', 'skipped')`),
    check('maintenance_run_duration_seconds_check', sql`${t.durationSeconds} >= 0`),
  ],
);

/** The migration runner's record of applied files (migrate.ts creates it, not a migration). */
export const schemaMigration = eventsSchema.table('schema_migration', {
  name: text('name').primaryKey(),
  checksum: text('checksum').notNull(),
  appliedAt: tstz('applied_at').notNull().defaultNow(),
});

export const schema = {
  cloudEvent,
  consumerCheckpoint,
  endedSession,
  eventName,
  eventRollupHourly,
  eventRollupHourTotal,
  eventRollupDaily,
  eventRollupWatermark,
  maintenanceRun,
  savedSearch,
  schemaMigration,
};

/** What an insert into `cloudEvent` may set (`EVENT_INSERT_FIELDS` in event-insert.ts ties the insert's row to it). */
export type NewCloudEventRow = typeof cloudEvent.$inferInsert;

/** Full-text configuration of `search_doc`; queries must use the same one. */
export const TEXT_SEARCH_CONFIG = 'simple';
/** Name of the catch-all partition (must stay empty). */
export const DEFAULT_PARTITION = 'events.cloud_event_default';
