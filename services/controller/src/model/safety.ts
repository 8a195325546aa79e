/**
 * The safe defaults the controller enforces before it touches Kafka: only allowlisted
 * clusters, never Kafka's internal topics, and no existing topic taken over unless the Pipeline
 * asks for it. Pure functions of the Pipeline (its spec, annotations and last status).
 */
import { ADOPT_TOPICS_ANNOTATION, type Pipeline } from '../pipeline/types.js';

/** Kafka's own topics (`__consumer_offsets`, `__transaction_state`, ...) start with two underscores. */
export function isReservedTopicName(name: string): boolean {
  return name.startsWith('__');
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
export function mayTakeOver(pipeline: Pipeline, name: string): boolean {
  return adopts(pipeline, name) || wasManaged(pipeline, name);
}

/** The Kafka default a topic of `replicationFactor` gets when its Pipeline sets none. */
export function minInsyncReplicas(replicationFactor: number): string | undefined {
  // With 3 or more replicas, a write acknowledged by acks=all survives the loss of one broker;
  // with fewer there is no value that keeps the topic writable through a broker's restart.
  return replicationFactor >= 3 ? String(replicationFactor - 1) : undefined;
}
