/**
 * The safe defaults the controller enforces before it touches Kafka: never a reserved topic name,
 * and no existing topic taken over unless the Pipeline asks for it and the operator's allowlist
 * lets it, or its last status records it as managed in the same cluster (the allowlist of
 * clusters is `cluster.ts`). Pure functions of the Pipeline (its spec, annotations and last
 * status) and the operator's topic rules.
 */
import { ADOPT_TOPICS_ANNOTATION, keyOf, type Pipeline } from '../pipeline/types.js';
import { type AllowedClusters, sameCluster } from './cluster.js';

/**
 * The operator's rules on Kafka topic names (the controller's configuration, never a Pipeline's):
 * `*` in a pattern matches any run of characters.
 */
export interface TopicRules {
  /** `CONTROLLER_RESERVED_TOPICS`: never created, changed or deleted; `__*` always. */
  reserved: readonly string[];
  /**
   * `CONTROLLER_ADOPTABLE_TOPICS`: existing topics a Pipeline's adopt annotation may take over;
   * `pattern` for any Pipeline, `namespace/pipeline:pattern` for that one only.
   */
  adoptable: readonly string[];
}

/** Schema registries, Kafka Connect and Kafka's own topics: what other tools keep in Kafka. */
export const DEFAULT_RESERVED_TOPICS = ['__*', '_*', 'connect-*'];

/** Kafka's own topics (`__consumer_offsets`, `__transaction_state`, ...): reserved whatever the rules say. */
const KAFKA_INTERNAL = '__*';

/** Whether `name` matches the pattern (`*`: any run of characters, the rest literal). */
export function matchesPattern(pattern: string, name: string): boolean {
  const literal = pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\-]/g, '\\$&'));
  return new RegExp(`^${literal.join('.*')}$`).test(name);
}

/** The reserved pattern `name` matches, if any. */
export function reservedBy(rules: TopicRules, name: string): string | undefined {
  return [KAFKA_INTERNAL, ...rules.reserved].find((pattern) => matchesPattern(pattern, name));
}

/** Whether the allowlist lets `pipeline` adopt the existing topic `name`. */
export function adoptable(rules: TopicRules, pipeline: Pipeline, name: string): boolean {
  const key = keyOf(pipeline.metadata);
  return rules.adoptable.some((entry) => {
    const colon = entry.indexOf(':');
    // Kafka names have no ':' or '/': an entry with them is scoped to one Pipeline.
    if (colon < 0) return matchesPattern(entry, name);
    return entry.slice(0, colon) === key && matchesPattern(entry.slice(colon + 1), name);
  });
}

/** Whether the adopt annotation names `name` (or is `*`). */
export function adopts(pipeline: Pipeline, name: string): boolean {
  const raw = pipeline.metadata.annotations?.[ADOPT_TOPICS_ANNOTATION] ?? '';
  const names = raw.split(',').map((s) => s.trim());
  return names.includes('*') || names.includes(name);
}

/** Whether the Pipeline asks to adopt `name` and the operator's allowlist lets it. */
export function adoptionGranted(rules: TopicRules, pipeline: Pipeline, name: string): boolean {
  return adopts(pipeline, name) && adoptable(rules, pipeline, name);
}

/** Where a record is read: the cluster of the reconcile and the allowlist that tells clusters apart. */
export interface RecordScope {
  cluster: string;
  allowed: AllowedClusters;
}

/**
 * Whether the records of the last status of `pipeline` (`status.cluster`) are for the cluster of
 * `scope`. A status written before the cluster was recorded counts for the Pipeline's cluster of
 * today (its records were written by a controller that knew no other), so an upgrade blocks nothing.
 */
export function recordsFor(pipeline: Pipeline, scope: RecordScope): boolean {
  const recorded = pipeline.status?.cluster;
  return recorded === undefined || sameCluster(recorded, scope.cluster, scope.allowed);
}

/** What a status entry records about the controller's right to change its topic. */
export interface TopicRecord {
  /** The controller created or adopted the topic for this Pipeline. */
  managed: boolean;
  /** The older Pipeline of a `Conflict` that manages it and hands it over when it lets it go. */
  handOverFrom?: string;
}

/**
 * What the last status of `pipeline` records about `name`, whatever its cluster. A `Conflict`
 * entry is never managed; its `handOverFrom` stays through the `Error` or `Blocked` entries that
 * follow it until the topic is taken over.
 */
export function lastRecord(pipeline: Pipeline, name: string): TopicRecord {
  const last = pipeline.status?.topics?.find((t) => t.name === name);
  if (!last) return { managed: false };
  const handOver = last.handOverFrom ? { handOverFrom: last.handOverFrom } : {};
  if (last.phase === 'Conflict') return { managed: false, ...handOver };
  // A status written before `managed` existed: those phases were managed topics.
  return { managed: last.managed ?? ['Ready', 'Refused'].includes(last.phase), ...handOver };
}

/** `lastRecord` when its records are for the cluster of `scope`; nothing otherwise. */
export function recordIn(pipeline: Pipeline, name: string, scope: RecordScope): TopicRecord {
  return recordsFor(pipeline, scope) ? lastRecord(pipeline, name) : { managed: false };
}

/**
 * Whether the last status of `pipeline` says the controller manages `name` in the cluster of
 * `scope`: it created or adopted it there for this Pipeline. Never by a `Conflict` entry, and never
 * by a record of another cluster: naming another cluster carries no topic over.
 */
export function wasManaged(pipeline: Pipeline, name: string, scope: RecordScope): boolean {
  return recordIn(pipeline, name, scope).managed;
}

/**
 * Whether the controller may change `name` although it exists in Kafka: adopted within the
 * allowlist, managed before in this cluster, or handed over there by the older Pipeline of a
 * `Conflict` entry (this Pipeline is asked only once that one no longer claims it).
 */
export function mayTakeOver(
  rules: TopicRules,
  pipeline: Pipeline,
  name: string,
  scope: RecordScope,
): boolean {
  const record = recordIn(pipeline, name, scope);
  return adoptionGranted(rules, pipeline, name) || record.managed || record.handOverFrom !== undefined;
}

/** The Kafka default a topic of `replicationFactor` gets when its Pipeline sets none. */
export function minInsyncReplicas(replicationFactor: number): string | undefined {
  // With 3 or more replicas, a write acknowledged by acks=all survives the loss of one broker;
  // with fewer there is no value that keeps the topic writable through a broker's restart.
  return replicationFactor >= 3 ? String(replicationFactor - 1) : undefined;
}
