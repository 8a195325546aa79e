/**
 * What a Pipeline asks of Kafka, read from its spec and annotations: which declared topics this
 * Pipeline manages (the broker's `TopicSpec`s), which it leaves alone, which an older Pipeline owns.
 */
import type { TopicSpec } from '@event-observatory/broker';
import {
  keyOf,
  PAUSE_ANNOTATION,
  type Pipeline,
  type PipelineTopic,
  UNMANAGED_TOPICS_ANNOTATION,
} from '../pipeline/types.js';
import { minInsyncReplicas } from './safety.js';

export function isPaused(pipeline: Pipeline): boolean {
  return pipeline.metadata.annotations?.[PAUSE_ANNOTATION]?.trim().toLowerCase() === 'true';
}

/** The topic names of the unmanaged-topics annotation. */
export function unmanagedTopics(pipeline: Pipeline): Set<string> {
  const raw = pipeline.metadata.annotations?.[UNMANAGED_TOPICS_ANNOTATION] ?? '';
  return new Set(
    raw
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== ''),
  );
}

/**
 * The broker's spec of a declared topic, with `min.insync.replicas` RF − 1 when RF ≥ 3 and unset,
 * without the `ignored` config keys (other tools tune those: never set, never reset).
 */
export function topicSpecOf(topic: PipelineTopic, ignored: ReadonlySet<string> = new Set()): TopicSpec {
  const minIsr = minInsyncReplicas(topic.replicationFactor);
  const configs = { ...(minIsr ? { 'min.insync.replicas': minIsr } : {}), ...topic.config };
  return {
    name: topic.name,
    partitions: topic.partitions,
    replicationFactor: topic.replicationFactor,
    configs: Object.fromEntries(Object.entries(configs).filter(([key]) => !ignored.has(key))),
  };
}

export interface DesiredTopics {
  /** The topics this Pipeline makes Kafka match. */
  managed: TopicSpec[];
  unmanaged: string[];
  /** Reserved names (Kafka's own `__...`, and the operator's): never touched. */
  reserved: string[];
  /** Declared here, owned by an older Pipeline (its key). */
  conflicts: Array<{ name: string; owner: string }>;
}

/**
 * Sorts the declared topics of `pipeline` by who manages them (`owners` from `topicOwners`);
 * `isReserved` says which names are never touched (`reservedBy` of the operator's rules).
 */
export function desiredTopics(
  pipeline: Pipeline,
  owners: Map<string, string>,
  cluster: string,
  isReserved: (name: string) => boolean,
  ignoredConfigs: readonly string[] = [],
): DesiredTopics {
  const ignored = new Set([...ignoredConfigs, ...(pipeline.spec.ignoredConfigs ?? [])]);
  const self = keyOf(pipeline.metadata);
  const skip = unmanagedTopics(pipeline);
  const desired: DesiredTopics = { managed: [], unmanaged: [], reserved: [], conflicts: [] };
  for (const topic of pipeline.spec.topics) {
    const owner = owners.get(`${cluster}|${topic.name}`) ?? self;
    if (isReserved(topic.name)) desired.reserved.push(topic.name);
    else if (skip.has(topic.name)) desired.unmanaged.push(topic.name);
    else if (owner !== self) desired.conflicts.push({ name: topic.name, owner });
    else desired.managed.push(topicSpecOf(topic, ignored));
  }
  return desired;
}
