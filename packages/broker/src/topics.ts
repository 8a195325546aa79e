/**
 * Topic administration: the topics of the spec as plain values, and `ensureTopics`, which makes the
 * broker match them. Shared by local tooling (devstack, `make dev`) and the Pipeline controller.
 *
 * The spec (pipeline operations, section 2): topic auto-creation is disabled, so topics only exist
 * because this code created them; both topics keep records for 168 hours.
 */
import type { Admin, ITopicConfig, ITopicMetadata } from 'kafkajs';
import { type BrokerConnection, brokerConnection } from './config/connection.js';

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
 * (Document 1). Kafka's default, 1 MiB + 12 bytes, would be smaller than a maximal event with headers.
 */
export const EVENT_MAX_MESSAGE_BYTES = 2 * 1024 * 1024;
/** The dead-letter topic holds a structured-mode copy (base64 data) of a record: twice the ceiling. */
export const DEAD_LETTER_MAX_MESSAGE_BYTES = 2 * EVENT_MAX_MESSAGE_BYTES;

/** The event topic: 12 partitions, replication factor 1, records kept 168 h, records up to 2 MiB. */
export function eventTopicSpec(
  name: string = brokerConnection().topic,
  retentionHours = brokerConnection().retentionHours,
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
 * key `topic/partition/offset`) and still deleted after 168 h like the event topic (a compact-only
 * topic ignores `retention.ms`), records up to 4 MiB.
 */
export function deadLetterTopicSpec(
  name: string = brokerConnection().dlqTopic,
  retentionHours = brokerConnection().retentionHours,
): TopicSpec {
  return {
    name,
    partitions: 3,
    replicationFactor: 1,
    configs: {
      'cleanup.policy': 'compact,delete',
      'retention.ms': retentionMs(retentionHours),
      'max.message.bytes': String(DEAD_LETTER_MAX_MESSAGE_BYTES),
    },
  };
}

/**
 * The event topic and its dead-letter topic as the connection names them, kept
 * `BROKER_LOG_RETENTION_HOURS`.
 *
 * @example
 * ```ts
 * await ensureTopics(admin, topicSpecs(readBrokerConnection(process.env)));
 * ```
 */
export function topicSpecs(
  connection: Pick<BrokerConnection, 'topic' | 'dlqTopic' | 'retentionHours'>,
): TopicSpec[] {
  return [
    eventTopicSpec(connection.topic, connection.retentionHours),
    deadLetterTopicSpec(connection.dlqTopic, connection.retentionHours),
  ];
}

/** What `ensureTopics` did to one topic. */
export type TopicAction = 'created' | 'updated' | 'unchanged';

export interface TopicOutcome {
  name: string;
  action: TopicAction;
  /** Partition count before (absent when created) and after. */
  partitionsBefore?: number;
  partitions: number;
  /** Config keys whose value was changed. */
  changedConfigs: string[];
  /**
   * Differences that were NOT applied because Kafka cannot do them in place: fewer partitions than
   * exist (partitions never shrink), another replication factor.
   */
  warnings: string[];
}

export interface EnsureTopicsResult {
  topics: TopicOutcome[];
}

export interface EnsureTopicsOptions {
  /** Bound on waiting for every partition to have a leader; default 30 s. */
  leaderTimeoutMs?: number;
}

/** Current state of an existing topic, as read from the broker. */
export interface TopicState {
  name: string;
  partitions: number;
  replicationFactor: number;
  configs: Record<string, string>;
}

/** The plan for one topic; a pure function of the spec and the current state. */
export interface TopicPlan {
  name: string;
  create?: TopicSpec;
  /** New total partition count, when it must grow. */
  increasePartitionsTo?: number;
  /** Configs to set (only those that differ from the current values). */
  alterConfigs: Record<string, string>;
  warnings: string[];
}

/** Compares a spec with the broker's state of that topic (undefined: it does not exist). */
export function planTopic(spec: TopicSpec, current: TopicState | undefined): TopicPlan {
  validateSpec(spec);
  if (!current) return { name: spec.name, create: spec, alterConfigs: {}, warnings: [] };
  const warnings: string[] = [];
  let increasePartitionsTo: number | undefined;
  if (spec.partitions > current.partitions) increasePartitionsTo = spec.partitions;
  else if (spec.partitions < current.partitions) {
    warnings.push(
      `${spec.name}: has ${current.partitions} partitions, spec asks ${spec.partitions}; partitions are never decreased`,
    );
  }
  if (spec.replicationFactor !== current.replicationFactor) {
    warnings.push(
      `${spec.name}: replication factor is ${current.replicationFactor}, spec asks ${spec.replicationFactor}; not changed (needs a partition reassignment)`,
    );
  }
  const alterConfigs: Record<string, string> = {};
  for (const [key, value] of Object.entries(spec.configs)) {
    if (current.configs[key] !== value) alterConfigs[key] = value;
  }
  return { name: spec.name, increasePartitionsTo, alterConfigs, warnings };
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

// kafkajs enum values (ResourceTypes.TOPIC = 2, ConfigResourceTypes.TOPIC = 2), kept as literals so this
// module needs only the type declarations of kafkajs.
const TOPIC_RESOURCE = 2;
/** Kafka's DescribeConfigs source DYNAMIC_TOPIC_CONFIG (kafkajs ConfigSource.TOPIC_CONFIG): set on the topic. */
const TOPIC_CONFIG_SOURCE = 1;

/** Reads partitions, replication factor and the configs named in `keys` for the existing topics. */
export async function readTopicStates(
  admin: Admin,
  names: string[],
  keys: string[],
): Promise<Map<string, TopicState>> {
  const states = new Map<string, TopicState>();
  const existing = new Set(await admin.listTopics());
  const present = names.filter((n) => existing.has(n));
  if (present.length === 0) return states;
  const metadata = await admin.fetchTopicMetadata({ topics: present });
  const configs = await admin.describeConfigs({
    includeSynonyms: false,
    resources: present.map((name) => ({ type: TOPIC_RESOURCE, name, configNames: keys })),
  });
  for (const topic of metadata.topics) {
    const resource = configs.resources.find((r) => r.resourceName === topic.name);
    const values: Record<string, string> = {};
    for (const entry of resource?.configEntries ?? []) values[entry.configName] = entry.configValue;
    states.set(topic.name, {
      name: topic.name,
      partitions: topic.partitions.length,
      replicationFactor: topic.partitions[0]?.replicas.length ?? 0,
      configs: values,
    });
  }
  return states;
}

function hasAllLeaders(topic: ITopicMetadata, partitions: number): boolean {
  return (
    topic.partitions.length >= partitions &&
    topic.partitions.every((p) => p.leader !== undefined && p.leader >= 0 && p.partitionErrorCode === 0)
  );
}

/**
 * Waits until every partition of every spec has a leader that serves it, so a producer that starts
 * right after creation does not hit the KRaft metadata race: the metadata can name a leader before
 * that broker has set up the partition (NOT_LEADER_OR_FOLLOWER on the first produce). So besides the
 * metadata, each topic's offsets are listed, which the leaders answer only once they serve the partition.
 */
export async function waitForLeaders(admin: Admin, specs: TopicSpec[], timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let missing: TopicSpec[] = specs;
  let lastError: unknown;
  while (missing.length > 0) {
    const still: TopicSpec[] = [];
    try {
      const metadata = await admin.fetchTopicMetadata({ topics: missing.map((s) => s.name) });
      for (const spec of missing) {
        const topic = metadata.topics.find((t) => t.name === spec.name);
        if (!topic || !hasAllLeaders(topic, spec.partitions)) {
          still.push(spec);
          continue;
        }
        try {
          const offsets = await admin.fetchTopicOffsets(spec.name);
          if (offsets.length < spec.partitions) still.push(spec);
        } catch (error) {
          lastError = error;
          still.push(spec);
        }
      }
    } catch (error) {
      lastError = error; // metadata not propagated yet: try again
      still.push(...missing);
    }
    missing = still;
    if (missing.length === 0) return;
    if (Date.now() > deadline) {
      throw new Error(
        `topics not served on every partition after ${timeoutMs} ms: ${missing.map((s) => s.name).join(', ')}` +
          (lastError ? ` (${String(lastError)})` : ''),
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Another caller changed the same topics between our read and our write: read again and re-plan. */
class ConcurrentChange extends Error {}

function isConcurrentChange(error: unknown): boolean {
  if (error instanceof ConcurrentChange) return true;
  const e = error as { type?: string; errors?: Array<{ type?: string }> };
  const conflict = (type?: string) => type === 'TOPIC_ALREADY_EXISTS' || type === 'INVALID_PARTITIONS';
  return conflict(e?.type) || (e?.errors ?? []).some((x) => conflict(x?.type));
}

function topicConfig(spec: TopicSpec): ITopicConfig {
  return {
    topic: spec.name,
    numPartitions: spec.partitions,
    replicationFactor: spec.replicationFactor,
    configEntries: Object.entries(spec.configs).map(([name, value]) => ({ name, value })),
  };
}

/**
 * `alterConfigs` (kafkajs 2.2.4 has no incremental variant) replaces a topic's whole set of dynamic
 * configs, so send the spec's values plus every other value set on the topic today.
 */
async function alterTopicConfigs(
  admin: Admin,
  changes: Array<{ name: string; set: Record<string, string> }>,
) {
  const all = await admin.describeConfigs({
    includeSynonyms: false,
    resources: changes.map((c) => ({ type: TOPIC_RESOURCE, name: c.name })),
  });
  await admin.alterConfigs({
    validateOnly: false,
    resources: changes.map((change) => {
      const resource = all.resources.find((r) => r.resourceName === change.name);
      const keep = (resource?.configEntries ?? [])
        .filter((e) => e.configSource === TOPIC_CONFIG_SOURCE && !(e.configName in change.set))
        .map((e) => ({ name: e.configName, value: e.configValue }));
      const set = Object.entries(change.set).map(([name, value]) => ({ name, value }));
      return { type: TOPIC_RESOURCE, name: change.name, configEntries: [...keep, ...set] };
    }),
  });
}

/** One read-plan-apply pass; throws ConcurrentChange when another caller got in between. */
async function applyOnce(admin: Admin, specs: TopicSpec[], created: Set<string>) {
  const keys = [...new Set(specs.flatMap((s) => Object.keys(s.configs)))];
  const states = await readTopicStates(
    admin,
    specs.map((s) => s.name),
    keys,
  );
  const plans = specs.map((spec) => ({ spec, plan: planTopic(spec, states.get(spec.name)) }));

  // One request per topic: kafkajs answers `false` for a whole request when any topic already existed.
  const toCreate = plans.filter((p) => p.plan.create).map((p) => p.spec);
  const createdNow = await Promise.all(
    toCreate.map((spec) => admin.createTopics({ topics: [topicConfig(spec)], waitForLeaders: false })),
  );
  toCreate.forEach((spec, i) => {
    if (createdNow[i]) created.add(spec.name);
  });
  if (createdNow.includes(false)) throw new ConcurrentChange('a topic was created concurrently');

  const grow = plans.filter((p) => p.plan.increasePartitionsTo !== undefined);
  if (grow.length > 0) {
    await admin.createPartitions({
      topicPartitions: grow.map((p) => ({ topic: p.spec.name, count: p.plan.increasePartitionsTo! })),
    });
  }
  const alter = plans.filter((p) => !p.plan.create && Object.keys(p.plan.alterConfigs).length > 0);
  if (alter.length > 0) {
    await alterTopicConfigs(
      admin,
      alter.map((p) => ({ name: p.spec.name, set: p.plan.alterConfigs })),
    );
  }
  return { states, plans };
}

/**
 * Makes the broker's topics match `specs`, idempotently: creates missing topics, adds partitions when
 * there are fewer than the spec asks (never removes any: that is reported in `warnings`), sets the
 * configs whose values differ, then waits until every partition has a serving leader. Safe to run
 * concurrently with itself: a conflicting change by another caller makes it read and plan again.
 *
 * @example
 * const admin = kafka.admin();
 * await admin.connect();
 * const { topics } = await ensureTopics(admin, [eventTopicSpec(), deadLetterTopicSpec()]);
 * // topics: [{ name: 'events.cloudevents.v1', action: 'created', partitions: 12, ... }, ...]
 */
export async function ensureTopics(
  admin: Admin,
  specs: TopicSpec[],
  options: EnsureTopicsOptions = {},
): Promise<EnsureTopicsResult> {
  for (const spec of specs) validateSpec(spec);
  const names = specs.map((s) => s.name);
  if (new Set(names).size !== names.length) throw new Error(`duplicate topic names in ${names.join(', ')}`);
  const created = new Set<string>();
  let pass: Awaited<ReturnType<typeof applyOnce>> | undefined;
  let firstStates: Map<string, TopicState> | undefined;
  for (let attempt = 1; !pass; attempt++) {
    try {
      pass = await applyOnce(admin, specs, created);
    } catch (error) {
      if (attempt >= 5 || !isConcurrentChange(error)) throw error;
      await new Promise((r) => setTimeout(r, 50 * attempt));
    }
    firstStates ??= pass?.states;
  }
  await waitForLeaders(admin, specs, options.leaderTimeoutMs);

  const { states, plans } = pass;
  return {
    topics: plans.map(({ spec, plan }): TopicOutcome => {
      const wasCreated = created.has(spec.name);
      const before = wasCreated ? undefined : (firstStates?.get(spec.name) ?? states.get(spec.name));
      const changedConfigs = Object.keys(plan.alterConfigs);
      const action: TopicAction = wasCreated
        ? 'created'
        : plan.increasePartitionsTo !== undefined || changedConfigs.length > 0
          ? 'updated'
          : 'unchanged';
      return {
        name: spec.name,
        action,
        ...(before ? { partitionsBefore: before.partitions } : {}),
        partitions: plan.increasePartitionsTo ?? states.get(spec.name)?.partitions ?? spec.partitions,
        changedConfigs,
        warnings: plan.warnings,
      };
    }),
  };
}
