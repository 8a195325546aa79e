/**
 * Topic administration, the I/O half of the topic model (`model.ts`): reads the state of topics,
 * creates them, adds partitions, alters configs and waits for their leaders. `ensureTopics` does all
 * of it for local tooling (devstack, `make dev`) and the benchmarks; the Pipeline controller uses the
 * pieces.
 */
import { retry } from '@event-observatory/service-kit/resilience';
import type { Admin, ITopicConfig, ITopicMetadata } from 'kafkajs';
import {
  changeOf,
  planTopic,
  type TopicPlan,
  type TopicRefusal,
  type TopicSpec,
  type TopicState,
  validateSpecs,
} from './model.js';

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
  /** The same differences as values (what and why), e.g. for a resource's status. */
  refused: TopicRefusal[];
}

export interface EnsureTopicsResult {
  topics: TopicOutcome[];
}

export interface EnsureTopicsOptions {
  /** Bound on waiting for every partition to have a leader; default 30 s. */
  leaderTimeoutMs?: number;
}

// kafkajs enum values (ResourceTypes.TOPIC = 2, ConfigResourceTypes.TOPIC = 2), kept as literals so this
// module needs only the type declarations of kafkajs.
const TOPIC_RESOURCE = 2;
/** Kafka's DescribeConfigs source DYNAMIC_TOPIC_CONFIG (kafkajs ConfigSource.TOPIC_CONFIG): set on the topic. */
const TOPIC_CONFIG_SOURCE = 1;

/**
 * A topic listed a moment ago can be unknown to the metadata or configs read right after: deleted
 * in between, or created and not yet known to the broker asked. The read starts again from the list.
 * (A kafkajs admin also fails so, on every later create, once another client deletes a topic it has
 * read: it refreshes the metadata of every topic it has seen.)
 */
export const isVanishedTopic = (error: unknown) =>
  (error as { type?: unknown } | null)?.type === 'UNKNOWN_TOPIC_OR_PARTITION';

/** Reads partitions, replication factor and the configs named in `keys` for the existing topics. */
export function readTopicStates(
  admin: Admin,
  names: string[],
  keys: string[],
): Promise<Map<string, TopicState>> {
  return retry(() => readTopicStatesOnce(admin, names, keys), {
    attempts: 5,
    backoff: { initialMs: 100, maxMs: 400 },
    retryable: isVanishedTopic,
  });
}

async function readTopicStatesOnce(
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

/** Topics not yet served on every partition, with the last error seen while checking. */
class NotServed extends Error {}

/** The specs whose partitions do not all have a serving leader yet. */
async function unserved(
  admin: Admin,
  specs: TopicSpec[],
): Promise<{ missing: TopicSpec[]; error?: unknown }> {
  let metadata: Awaited<ReturnType<Admin['fetchTopicMetadata']>>;
  try {
    metadata = await admin.fetchTopicMetadata({ topics: specs.map((s) => s.name) });
  } catch (error) {
    return { missing: specs, error }; // metadata not propagated yet
  }
  const missing: TopicSpec[] = [];
  let error: unknown;
  for (const spec of specs) {
    const topic = metadata.topics.find((t) => t.name === spec.name);
    if (!topic || !hasAllLeaders(topic, spec.partitions)) {
      missing.push(spec);
      continue;
    }
    try {
      const offsets = await admin.fetchTopicOffsets(spec.name);
      if (offsets.length < spec.partitions) missing.push(spec);
    } catch (e) {
      error = e;
      missing.push(spec);
    }
  }
  return { missing, error };
}

/**
 * Waits until every partition of every spec has a leader that serves it, so a producer that starts
 * right after creation does not hit the KRaft metadata race: the metadata can name a leader before
 * that broker has set up the partition (NOT_LEADER_OR_FOLLOWER on the first produce). So besides the
 * metadata, each topic's offsets are listed, which the leaders answer only once they serve the
 * partition. Checks every 100 ms; throws naming the topics still not served after `timeoutMs`.
 */
export async function waitForLeaders(admin: Admin, specs: TopicSpec[], timeoutMs = 30_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let missing = specs;
  let lastError: unknown;
  await retry(
    async () => {
      const check = await unserved(admin, missing);
      missing = check.missing;
      lastError = check.error ?? lastError;
      if (missing.length === 0) return;
      throw new NotServed(
        `topics not served on every partition after ${timeoutMs} ms: ${missing.map((s) => s.name).join(', ')}` +
          (lastError ? ` (${String(lastError)})` : ''),
      );
    },
    { backoff: { initialMs: 100, maxMs: 100 }, retryable: () => performance.now() <= deadline },
  );
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
  const plans = specs.map((spec) => planTopic(spec, states.get(spec.name)));

  // One request per topic: kafkajs answers `false` for a whole request when any topic already existed.
  const toCreate = plans.flatMap((p) => changeOf(p, 'create')?.spec ?? []);
  const createdNow = await Promise.all(
    toCreate.map((spec) => admin.createTopics({ topics: [topicConfig(spec)], waitForLeaders: false })),
  );
  toCreate.forEach((spec, i) => {
    if (createdNow[i]) created.add(spec.name);
  });
  if (createdNow.includes(false)) throw new ConcurrentChange('a topic was created concurrently');

  const grow = plans.flatMap((p) => {
    const change = changeOf(p, 'add-partitions');
    return change ? [{ topic: p.name, count: change.to }] : [];
  });
  if (grow.length > 0) await admin.createPartitions({ topicPartitions: grow });
  const alter = plans.flatMap((p) => {
    const change = changeOf(p, 'alter-configs');
    return change ? [{ name: p.name, set: change.configs }] : [];
  });
  if (alter.length > 0) await alterTopicConfigs(admin, alter);
  return { states, plans };
}

function outcomeOf(plan: TopicPlan, wasCreated: boolean, before: TopicState | undefined): TopicOutcome {
  const grown = changeOf(plan, 'add-partitions');
  const changedConfigs = Object.keys(changeOf(plan, 'alter-configs')?.configs ?? {});
  const action: TopicAction = wasCreated
    ? 'created'
    : grown !== undefined || changedConfigs.length > 0
      ? 'updated'
      : 'unchanged';
  return {
    name: plan.name,
    action,
    ...(before && !wasCreated ? { partitionsBefore: before.partitions } : {}),
    partitions: grown?.to ?? before?.partitions ?? changeOf(plan, 'create')?.spec.partitions ?? 0,
    changedConfigs,
    warnings: plan.refused.map((r) => r.message),
    refused: plan.refused,
  };
}

/**
 * Makes the broker's topics match `specs`, idempotently: creates missing topics, adds partitions when
 * there are fewer than the spec asks (never removes any: that is reported in `warnings`), sets the
 * configs whose values differ, then waits until every partition has a serving leader. Safe to run
 * concurrently with itself: a conflicting change by another caller makes it read and plan again (up to
 * 5 passes).
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
  validateSpecs(specs);
  const created = new Set<string>();
  const { states, plans } = await retry(() => applyOnce(admin, specs, created), {
    attempts: 5,
    backoff: { initialMs: 50, maxMs: 200 },
    retryable: isConcurrentChange,
  });
  await waitForLeaders(admin, specs, options.leaderTimeoutMs);
  return { topics: plans.map((plan) => outcomeOf(plan, created.has(plan.name), states.get(plan.name))) };
}

/**
 * Deletes those of `names` that exist (a topic already gone is not an error) and returns the names
 * deleted, once the broker no longer lists them. `timeoutMs` bounds the broker's wait for the
 * deletion to reach the controller quorum, and then the wait until it is listed no more.
 *
 * @example
 * await deleteTopics(admin, ['events.old']); // ['events.old']
 */
export async function deleteTopics(admin: Admin, names: string[], timeoutMs = 10_000): Promise<string[]> {
  const existing = new Set(await admin.listTopics());
  const present = names.filter((n) => existing.has(n));
  if (present.length === 0) return present;
  await admin.deleteTopics({ topics: present, timeout: timeoutMs });
  await waitUnlisted(admin, present, timeoutMs);
  return present;
}

/**
 * The quorum's answer to a deletion comes before the broker has applied it to its metadata: until
 * then it still lists the topic, and refuses to create one of that name. Checks every 100 ms; throws
 * naming the topics still listed after `timeoutMs`.
 */
async function waitUnlisted(admin: Admin, names: string[], timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  await retry(
    async () => {
      const listed = new Set(await admin.listTopics());
      const still = names.filter((n) => listed.has(n));
      if (still.length > 0)
        throw new Error(`topics deleted but still listed after ${timeoutMs} ms: ${still.join(', ')}`);
    },
    { backoff: { initialMs: 100, maxMs: 100 }, retryable: () => performance.now() <= deadline },
  );
}
