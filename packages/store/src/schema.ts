/**
 * Drizzle description of the `events` schema for typed queries. The DDL itself (partitioning,
 * generated-column expressions, indexes) lives in the SQL files of `migrations/`; generated
 * columns are declared with `generatedAlwaysAs` so inserts never try to write them.
 */
import { sql } from 'drizzle-orm';
import {
  bigint,
  customType,
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
  },
  (t) => [unique('cloud_event_identity').on(t.occurredAt, t.ceSource, t.ceId)],
);

export const consumerCheckpoint = eventsSchema.table(
  'consumer_checkpoint',
  {
    consumerGroup: text('consumer_group').notNull(),
    topic: text('topic').notNull(),
    partition: integer('partition').notNull(),
    nextOffset: bigint('next_offset', { mode: 'number' }).notNull(),
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

export const savedSearch = eventsSchema.table('saved_search', {
  id: uuid('id').primaryKey().defaultRandom(),
  name: text('name').notNull(),
  query: jsonb('query').notNull(),
  createdAt: tstz('created_at').notNull().defaultNow(),
});

export const schema = { cloudEvent, consumerCheckpoint, eventRollupHourly, savedSearch };

export type CloudEventRow = typeof cloudEvent.$inferSelect;
export type NewCloudEventRow = typeof cloudEvent.$inferInsert;

/** Full-text configuration of `search_doc`; queries must use the same one. */
export const TEXT_SEARCH_CONFIG = 'simple';
/** Name of the catch-all partition (must stay empty). */
export const DEFAULT_PARTITION = 'events.cloud_event_default';
