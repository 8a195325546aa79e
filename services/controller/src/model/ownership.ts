/**
 * Which Pipeline manages a topic when several declare it. A topic is identified by its Kafka
 * cluster (the bootstrap servers, order ignored) and name; the oldest Pipeline (creation time,
 * then namespace/name) owns it, as in Strimzi's topic operator, so a newer one can never take a
 * topic from under a running pipeline. Pipelines being deleted still own until their finalizer
 * is gone (a `Delete` policy must not delete a topic another Pipeline took meanwhile).
 */
import { CONTROLLER_ANNOTATION, keyOf, type Pipeline } from '../pipeline/types.js';

/**
 * Whose `pipeline` is, seen by the controller `name`: its own (stamped with its name), nobody's yet
 * (unstamped: the first controller to reconcile it stamps it), or another controller's.
 */
export function controlOf(pipeline: Pipeline, name: string): 'own' | 'unclaimed' | 'foreign' {
  const stamp = pipeline.metadata.annotations?.[CONTROLLER_ANNOTATION]?.trim();
  if (!stamp) return 'unclaimed';
  return stamp === name ? 'own' : 'foreign';
}

/** The Kafka cluster of a Pipeline: its bootstrap servers (or the default), sorted. */
export function clusterOf(pipeline: Pipeline, defaultServers: string[]): string {
  const raw = pipeline.spec.kafka?.bootstrapServers;
  const servers = raw ? raw.split(',').map((s) => s.trim()) : defaultServers;
  return [...servers].sort().join(',');
}

function older(a: Pipeline, b: Pipeline): boolean {
  const ta = Date.parse(a.metadata.creationTimestamp ?? '') || 0;
  const tb = Date.parse(b.metadata.creationTimestamp ?? '') || 0;
  return ta !== tb ? ta < tb : keyOf(a.metadata) < keyOf(b.metadata);
}

/** `cluster|topic` -> the key of the Pipeline that owns it. */
export function topicOwners(pipelines: Iterable<Pipeline>, defaultServers: string[]): Map<string, string> {
  const owners = new Map<string, Pipeline>();
  for (const p of pipelines) {
    const cluster = clusterOf(p, defaultServers);
    for (const topic of p.spec.topics) {
      const id = `${cluster}|${topic.name}`;
      const current = owners.get(id);
      if (!current || older(p, current)) owners.set(id, p);
    }
  }
  return new Map([...owners].map(([id, p]) => [id, keyOf(p.metadata)]));
}

/** Keys of the other Pipelines that declare a topic of `pipeline` (to requeue them when it changes). */
export function sharingPipelines(
  pipeline: Pipeline,
  all: Iterable<Pipeline>,
  defaultServers: string[],
): string[] {
  const cluster = clusterOf(pipeline, defaultServers);
  const names = new Set(pipeline.spec.topics.map((t) => t.name));
  const key = keyOf(pipeline.metadata);
  const keys: string[] = [];
  for (const p of all) {
    if (keyOf(p.metadata) === key || clusterOf(p, defaultServers) !== cluster) continue;
    if (p.spec.topics.some((t) => names.has(t.name))) keys.push(keyOf(p.metadata));
  }
  return keys;
}

export /** Topics of `pipeline` other Pipelines of the same cluster declare: name -> `namespace/name` of one. */
function claimants(
  pipeline: Pipeline,
  all: Pipeline[],
  cluster: string,
  defaultServers: string[],
): Map<string, string> {
  const self = keyOf(pipeline.metadata);
  const claimed = new Map<string, string>();
  for (const other of all) {
    if (keyOf(other.metadata) === self || clusterOf(other, defaultServers) !== cluster) continue;
    for (const t of other.spec.topics) if (!claimed.has(t.name)) claimed.set(t.name, keyOf(other.metadata));
  }
  return claimed;
}
