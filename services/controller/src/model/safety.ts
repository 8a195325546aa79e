/**
 * The safe defaults the controller enforces before it touches Kafka: only allowlisted
 * clusters, never a reserved topic name, and no existing topic taken over unless the Pipeline
 * asks for it and the operator's allowlist lets it. Pure functions of the Pipeline (its spec,
 * annotations and last status) and the operator's topic rules.
 */
import { ADOPT_TOPICS_ANNOTATION, keyOf, type Pipeline } from '../pipeline/types.js';

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

/** A `host:port` compared as Kafka resolves it: the host without case. */
const normal = (server: string) => server.trim().toLowerCase();

/** The servers of `cluster` (sorted `host:port,...`) that the allowlist lacks. */
export function serversNotAllowed(cluster: string, allowed: readonly string[]): string[] {
  const allow = new Set(allowed.map(normal));
  return cluster.split(',').filter((s) => !allow.has(normal(s)));
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

/**
 * Whether the last status of `pipeline` says the controller manages `name`: it created or adopted
 * it for this Pipeline, or for the older Pipeline a `Conflict` entry names (the topic is then
 * handed over when that one goes).
 */
export function wasManaged(pipeline: Pipeline, name: string): boolean {
  const last = pipeline.status?.topics?.find((t) => t.name === name);
  if (!last) return false;
  // A status written before `managed` existed: those phases were managed topics.
  return last.managed ?? ['Ready', 'Refused', 'Conflict'].includes(last.phase);
}

/** Whether the controller may change `name` although it exists in Kafka. */
export function mayTakeOver(rules: TopicRules, pipeline: Pipeline, name: string): boolean {
  return adoptionGranted(rules, pipeline, name) || wasManaged(pipeline, name);
}

/** The Kafka default a topic of `replicationFactor` gets when its Pipeline sets none. */
export function minInsyncReplicas(replicationFactor: number): string | undefined {
  // With 3 or more replicas, a write acknowledged by acks=all survives the loss of one broker;
  // with fewer there is no value that keeps the topic writable through a broker's restart.
  return replicationFactor >= 3 ? String(replicationFactor - 1) : undefined;
}
