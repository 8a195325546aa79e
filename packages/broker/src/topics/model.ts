/**
 * The topic model, pure (no I/O): the topics of the spec as plain values, the state read from a
 * broker, and the plan that turns one into the other. `ensureTopics` (admin.ts) and the Pipeline
 * controller apply the plan; anything can print it.
 *
 * The spec (pipeline operations, section 2): topic auto-creation is disabled, so topics only exist
 * because this code created them; both topics keep records `BROKER_LOG_RETENTION_HOURS`.
 */
import { type BrokerTopics, brokerTopics } from '../config/connection.js';

export interface TopicSpec {
  name: string;
  partitions: number;
  replicationFactor: number;
  /** Topic-level configs (`cleanup.policy`, `retention.ms`, ...), as Kafka spells them. */
  configs: Record<string, string>;
}

/** `retention.ms` for a number of hours. */
export function retentionMs(hours: number): string {
  return String(hours * 60 * 60 * 1000);
}

/**
 * Largest record the event topic accepts (topic config `max.message.bytes`): 2 MiB, above the ingest
 * API's 1 MiB event limit plus its `ce_` headers, so the API refuses an oversized event, never the broker
 * (`INGEST_MAX_EVENT_BYTES`). Kafka's default, 1 MiB + 12 bytes, would be smaller than a maximal event with headers.
 */
export const EVENT_MAX_MESSAGE_BYTES = 2 * 1024 * 1024;
/** The dead-letter topic holds a structured-mode copy (base64 data) of a record: twice the ceiling. */
export const DEAD_LETTER_MAX_MESSAGE_BYTES = 2 * EVENT_MAX_MESSAGE_BYTES;

/** How often the dead-letter topic rolls a segment, so compaction runs within the retention (1 h). */
export const DEAD_LETTER_SEGMENT_MS = 60 * 60 * 1000;

/**
 * The event topic: 12 partitions, replication factor 1, records up to 2 MiB. Name and retention
 * default to the configuration's defaults.
 */
export function eventTopicSpec(
  name: string = brokerTopics().topic,
  retentionHours = brokerTopics().retentionHours,
): TopicSpec {
  return {
    name,
    partitions: 12,
    replicationFactor: 1,
    configs: {
      'cleanup.policy': 'delete',
      'retention.ms': retentionMs(retentionHours),
      'max.message.bytes': String(EVENT_MAX_MESSAGE_BYTES),
    },
  };
}

/**
 * The dead-letter topic: 3 partitions, compacted (a replayed poison record overwrites its predecessor by
 * key `topic/partition/offset`) and still deleted after the retention like the event topic (a
 * compact-only topic ignores `retention.ms`), records up to 4 MiB. Segments roll every hour
 * (`segment.ms`): the cleaner never compacts the active segment, and Kafka's default (7 days)
 * equals the default retention, so replayed letters would be deleted before being compacted.
 */
export function deadLetterTopicSpec(
  name: string = brokerTopics().dlqTopic,
  retentionHours = brokerTopics().retentionHours,
): TopicSpec {
  return {
    name,
    partitions: 3,
    replicationFactor: 1,
    configs: {
      'cleanup.policy': 'compact,delete',
      'retention.ms': retentionMs(retentionHours),
      'max.message.bytes': String(DEAD_LETTER_MAX_MESSAGE_BYTES),
      'segment.ms': String(DEAD_LETTER_SEGMENT_MS),
    },
  };
}

/**
 * The event topic and its dead-letter topic as configured, kept
 * `BROKER_LOG_RETENTION_HOURS`.
 *
 * @example
 * ```ts
 * await ensureTopics(admin, topicSpecs(readBrokerTopics(process.env)));
 * ```
 */
export function topicSpecs(topics: BrokerTopics): TopicSpec[] {
  return [
    eventTopicSpec(topics.topic, topics.retentionHours),
    deadLetterTopicSpec(topics.dlqTopic, topics.retentionHours),
  ];
}

/** State of an existing topic, as read from the broker. */
export interface TopicState {
  name: string;
  partitions: number;
  replicationFactor: number;
  /** Values of the configs asked for (those the specs name). */
  configs: Record<string, string>;
}

/** One step that makes a topic match its spec. */
export type TopicChange =
  | { kind: 'create'; spec: TopicSpec }
  | { kind: 'add-partitions'; from: number; to: number }
  /** Only the configs whose value differs. */
  | { kind: 'alter-configs'; configs: Record<string, string> };

/** A difference Kafka cannot apply in place; the plan leaves it and says why. */
export interface TopicRefusal {
  kind: 'cannot-decrease-partitions' | 'cannot-change-replication-factor';
  current: number;
  desired: number;
  /** One line for logs, warnings and a resource's status. */
  message: string;
}

/** What to do to one topic: a plain value, computed without touching anything. */
export interface TopicPlan {
  name: string;
  /** In the order they apply; empty when the topic matches (or only refusals remain). */
  changes: TopicChange[];
  refused: TopicRefusal[];
}

/**
 * Compares a spec with the broker's state of that topic (undefined: it does not exist).
 *
 * @example
 * ```ts
 * planTopic(eventTopicSpec(), { name: 'events.cloudevents.v1', partitions: 6, replicationFactor: 1, configs: {} });
 * // { changes: [{ kind: 'add-partitions', from: 6, to: 12 }, { kind: 'alter-configs', configs: {...} }], refused: [] }
 * ```
 */
export function planTopic(spec: TopicSpec, current: TopicState | undefined): TopicPlan {
  validateSpec(spec);
  if (!current) return { name: spec.name, changes: [{ kind: 'create', spec }], refused: [] };
  const changes: TopicChange[] = [];
  const refused: TopicRefusal[] = [];
  if (spec.partitions > current.partitions) {
    changes.push({ kind: 'add-partitions', from: current.partitions, to: spec.partitions });
  } else if (spec.partitions < current.partitions) {
    refused.push({
      kind: 'cannot-decrease-partitions',
      current: current.partitions,
      desired: spec.partitions,
      message: `${spec.name}: has ${current.partitions} partitions, spec asks ${spec.partitions}; partitions are never decreased`,
    });
  }
  if (spec.replicationFactor !== current.replicationFactor) {
    refused.push({
      kind: 'cannot-change-replication-factor',
      current: current.replicationFactor,
      desired: spec.replicationFactor,
      message: `${spec.name}: replication factor is ${current.replicationFactor}, spec asks ${spec.replicationFactor}; not changed (needs a partition reassignment)`,
    });
  }
  const configs: Record<string, string> = {};
  for (const [key, value] of Object.entries(spec.configs)) {
    if (current.configs[key] !== value) configs[key] = value;
  }
  if (Object.keys(configs).length > 0) changes.push({ kind: 'alter-configs', configs });
  return { name: spec.name, changes, refused };
}

/** Throws on a spec Kafka would refuse, before anything is sent. */
export function validateSpec(spec: TopicSpec): void {
  if (!/^[a-zA-Z0-9._-]{1,249}$/.test(spec.name) || spec.name === '.' || spec.name === '..') {
    throw new Error(`invalid topic name ${JSON.stringify(spec.name)}`);
  }
  if (!Number.isInteger(spec.partitions) || spec.partitions < 1) {
    throw new Error(`${spec.name}: partitions must be a positive integer, got ${spec.partitions}`);
  }
  if (!Number.isInteger(spec.replicationFactor) || spec.replicationFactor < 1) {
    throw new Error(
      `${spec.name}: replicationFactor must be a positive integer, got ${spec.replicationFactor}`,
    );
  }
}

/** Throws on specs `ensureTopics` cannot apply together: an invalid one, or a name twice. */
export function validateSpecs(specs: TopicSpec[]): void {
  for (const spec of specs) validateSpec(spec);
  const names = specs.map((s) => s.name);
  if (new Set(names).size !== names.length) throw new Error(`duplicate topic names in ${names.join(', ')}`);
}

/** The change of `kind` in a plan, if it has one. */
export function changeOf<K extends TopicChange['kind']>(
  plan: TopicPlan,
  kind: K,
): Extract<TopicChange, { kind: K }> | undefined {
  return plan.changes.find((c): c is Extract<TopicChange, { kind: K }> => c.kind === kind);
}
