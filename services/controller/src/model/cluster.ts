/**
 * Which Kafka cluster a Pipeline's bootstrap servers name. The operator's allowlist
 * (`CONTROLLER_ALLOWED_BOOTSTRAP`) lists the clusters: `;` between clusters, `,` between the
 * servers of one (a list without `;` is one cluster). A cluster's identity, the key of ownership,
 * conflicts and the `managed` record, is its allowlist entry, never the spelling a Pipeline chose:
 * servers are compared as Kafka resolves them (trimmed, the host without case), and any of an
 * entry's servers, in any order, name that entry's cluster. Otherwise one Pipeline could name the
 * cluster another uses in a different way (`KAFKA:9092`, one broker of three, the TLS listener)
 * and own, alter and delete a topic the other owns.
 */
import type { Pipeline } from '../pipeline/types.js';

/** The operator's Kafka clusters: the normalised servers of each allowlist entry. */
export type AllowedClusters = ReadonlyArray<readonly string[]>;

/** How the controller tells clusters apart: its own servers and the allowlist. */
export interface ClusterRules {
  /** `BROKER_BOOTSTRAP_SERVERS`: the servers of a Pipeline that names none (normalised). */
  defaultServers: readonly string[];
  allowed: AllowedClusters;
}

/** A `host:port` as Kafka resolves it: trimmed, the host without case (DNS names have none). */
export function normalServer(server: string): string {
  return server.trim().toLowerCase();
}

/** Servers as a set: normalised, without empty items, sorted, each once. */
export function normalServers(servers: Iterable<string>): string[] {
  return [...new Set([...servers].map(normalServer).filter((s) => s !== ''))].sort();
}

/** The allowlist entries, normalised (an empty one dropped). */
export function allowedClusters(entries: ReadonlyArray<readonly string[]>): AllowedClusters {
  return entries.map((servers) => normalServers(servers)).filter((servers) => servers.length > 0);
}

/** The rules of a controller: its default servers and its allowlist entries (each one cluster). */
export function clusterRules(
  defaultServers: readonly string[],
  entries: ReadonlyArray<readonly string[]>,
): ClusterRules {
  return { defaultServers: normalServers(defaultServers), allowed: allowedClusters(entries) };
}

/** The servers the Pipeline names (or the default), normalised: what its admin client connects to. */
export function serversOf(pipeline: Pipeline, defaultServers: readonly string[]): string[] {
  const raw = pipeline.spec.kafka?.bootstrapServers;
  return normalServers(raw ? raw.split(',') : defaultServers);
}

/** The allowlist entry holding every one of `servers`, if one does. */
function entryOf(servers: readonly string[], allowed: AllowedClusters): readonly string[] | undefined {
  if (servers.length === 0) return undefined;
  return allowed.find((entry) => servers.every((s) => entry.includes(s)));
}

/**
 * The identity of the cluster `servers` name: the allowlist entry holding all of them, as its
 * servers joined; servers no single entry holds are a cluster of their own (their list), which
 * no allowed cluster equals and whose Pipeline never reaches Kafka.
 */
export function clusterKey(servers: readonly string[], allowed: AllowedClusters): string {
  const normal = normalServers(servers);
  return (entryOf(normal, allowed) ?? normal).join(',');
}

/** The cluster of a Pipeline (`clusterKey` of its servers). */
export function clusterOf(pipeline: Pipeline, rules: ClusterRules): string {
  return clusterKey(serversOf(pipeline, rules.defaultServers), rules.allowed);
}

/**
 * Why the Pipeline's `servers` may not be administered, or undefined when they may: every one
 * must be in the allowlist, and all in one entry (one cluster).
 */
export function clusterRefusal(servers: readonly string[], allowed: AllowedClusters): string | undefined {
  const normal = normalServers(servers);
  const missing = normal.filter((s) => !allowed.some((entry) => entry.includes(s)));
  if (missing.length > 0) return `${missing.join(', ')} not in CONTROLLER_ALLOWED_BOOTSTRAP`;
  if (!entryOf(normal, allowed))
    return `${normal.join(', ')} are servers of different clusters of CONTROLLER_ALLOWED_BOOTSTRAP`;
  return undefined;
}

/**
 * Whether the cluster recorded in a status (`recorded`, a `clusterKey` of an earlier allowlist)
 * is `cluster` under today's allowlist: the servers of it the allowlist still names are all in
 * `cluster`'s entry, and there is one. So a server added to or removed from an entry keeps the
 * records; moving to another entry does not.
 */
export function sameCluster(recorded: string, cluster: string, allowed: AllowedClusters): boolean {
  if (recorded === cluster) return true;
  const known = normalServers(recorded.split(',')).filter((s) => allowed.some((e) => e.includes(s)));
  return known.length > 0 && clusterKey(known, allowed) === cluster;
}
