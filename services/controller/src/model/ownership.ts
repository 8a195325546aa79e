/**
 * Which Pipeline manages a topic when several declare it. A topic is identified by its Kafka
 * cluster (`clusterOf`: the allowlist entry its servers name) and name; the oldest Pipeline
 * (creation time, then namespace/name) owns it, as in Strimzi's topic operator, so a newer one can
 * never take a topic from under a running pipeline. Under the default topic-name rule the release
 * namespace (`home`) comes first: its Pipelines own the topics they declare whatever their age,
 * and another namespace's claim on one is refused, never counted. Pipelines being deleted still
 * own until their finalizer is gone (a `Delete` policy must not delete a topic another Pipeline
 * took meanwhile). What reads a topic for a Pipeline besides the reconciler asks `entitlement`.
 */
import { CONTROLLER_ANNOTATION, keyOf, type Pipeline } from '../pipeline/types.js';
import { type ClusterRules, clusterOf } from './cluster.js';
import { reservedBy, type TopicRules, wasManaged } from './safety.js';

/**
 * Whose `pipeline` is, seen by the controller `name`: its own (stamped with its name), nobody's yet
 * (unstamped: the first controller to reconcile it stamps it), or another controller's.
 */
export function controlOf(pipeline: Pipeline, name: string): 'own' | 'unclaimed' | 'foreign' {
  const stamp = pipeline.metadata.annotations?.[CONTROLLER_ANNOTATION]?.trim();
  if (!stamp) return 'unclaimed';
  return stamp === name ? 'own' : 'foreign';
}

/** The namespace of a Pipeline key (`namespace/name`). */
export function namespaceOfKey(key: string): string {
  return key.slice(0, key.indexOf('/'));
}

/**
 * Whether a claim of `claimant` on a topic `holder` declares is refused: under the default
 * topic-name rule (`home` set), a Pipeline outside the release namespace never gets a topic one
 * of the release namespace declares.
 */
export function refusedClaim(claimant: Pipeline, holder: Pipeline, home: string | undefined): boolean {
  return home !== undefined && holder.metadata.namespace === home && claimant.metadata.namespace !== home;
}

/** Whether `a` comes before `b` for a topic both declare: the release namespace, then age, then key. */
function outranks(a: Pipeline, b: Pipeline, home: string | undefined): boolean {
  if (refusedClaim(b, a, home)) return true;
  if (refusedClaim(a, b, home)) return false;
  const ta = Date.parse(a.metadata.creationTimestamp ?? '') || 0;
  const tb = Date.parse(b.metadata.creationTimestamp ?? '') || 0;
  return ta !== tb ? ta < tb : keyOf(a.metadata) < keyOf(b.metadata);
}

/**
 * `cluster|topic` -> the key of the Pipeline that owns it; `home`: the release namespace under the
 * default topic-name rule (its Pipelines first).
 */
export function topicOwners(
  pipelines: Iterable<Pipeline>,
  clusters: ClusterRules,
  home?: string,
): Map<string, string> {
  const owners = new Map<string, Pipeline>();
  for (const p of pipelines) {
    const cluster = clusterOf(p, clusters);
    for (const topic of p.spec.topics) {
      const id = `${cluster}|${topic.name}`;
      const current = owners.get(id);
      if (!current || outranks(p, current, home)) owners.set(id, p);
    }
  }
  return new Map([...owners].map(([id, p]) => [id, keyOf(p.metadata)]));
}

/** Keys of the other Pipelines that declare a topic of `pipeline` (to requeue them when it changes). */
export function sharingPipelines(
  pipeline: Pipeline,
  all: Iterable<Pipeline>,
  clusters: ClusterRules,
): string[] {
  const cluster = clusterOf(pipeline, clusters);
  const names = new Set(pipeline.spec.topics.map((t) => t.name));
  const key = keyOf(pipeline.metadata);
  const keys: string[] = [];
  for (const p of all) {
    if (keyOf(p.metadata) === key || clusterOf(p, clusters) !== cluster) continue;
    if (p.spec.topics.some((t) => names.has(t.name))) keys.push(keyOf(p.metadata));
  }
  return keys;
}

/**
 * Topics of `pipeline` other Pipelines of the same cluster declare: name -> `namespace/name` of
 * one. A refused claim (`refusedClaim`) is none: it never keeps a release namespace's topic.
 */
export function claimants(
  pipeline: Pipeline,
  all: Pipeline[],
  cluster: string,
  clusters: ClusterRules,
  home?: string,
): Map<string, string> {
  const self = keyOf(pipeline.metadata);
  const claimed = new Map<string, string>();
  for (const other of all) {
    if (keyOf(other.metadata) === self || clusterOf(other, clusters) !== cluster) continue;
    if (refusedClaim(other, pipeline, home)) continue;
    for (const t of other.spec.topics) if (!claimed.has(t.name)) claimed.set(t.name, keyOf(other.metadata));
  }
  return claimed;
}

/** Why a Pipeline is not entitled to a topic it declares: the reconciler's reasons for leaving it alone. */
export type Unentitled = 'ReservedTopicName' | 'TopicNameCollision' | 'TopicNotOwned';

/**
 * Whether a Pipeline is entitled to a topic it declares, judged as the reconciler judges it, for
 * what reads Kafka beside it (the flow observer); `pipelines`: every Pipeline the controller
 * reconciles (Kafka names), as the reconciler counts them. Entitled means: the name is not
 * reserved, the Pipeline owns the topic (`topicOwners`, the release namespace first under `home`),
 * and its last status records the topic as managed in its cluster (created or adopted for it
 * there). Declaring a name is free: the sole claimant of an existing topic (a platform topic made
 * without a Pipeline, another release's) owns it, yet it is not its own until adopted.
 */
export function entitlement(
  pipelines: Pipeline[],
  clusters: ClusterRules,
  rules: TopicRules,
  home?: string,
): (pipeline: Pipeline, name: string) => Unentitled | undefined {
  const owners = topicOwners(pipelines, clusters, home);
  const byKey = new Map(pipelines.map((p) => [keyOf(p.metadata), p]));
  return (pipeline, name) => {
    if (reservedBy(rules, name) !== undefined) return 'ReservedTopicName';
    const cluster = clusterOf(pipeline, clusters);
    const owner = owners.get(`${cluster}|${name}`);
    if (owner !== keyOf(pipeline.metadata)) {
      const holder = byKey.get(owner ?? '');
      return holder && refusedClaim(pipeline, holder, home) ? 'TopicNameCollision' : 'TopicNotOwned';
    }
    return wasManaged(pipeline, name, { cluster, allowed: clusters.allowed }) ? undefined : 'TopicNotOwned';
  };
}
