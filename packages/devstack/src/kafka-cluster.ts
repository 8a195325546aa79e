/**
 * A KRaft cluster of several Kafka nodes on this machine, each a broker and a controller (combined
 * mode, every node a voter), for tests of replication: a leader killed, the in-sync replicas below
 * `min.insync.replicas`. Node `i` lives in `<dataDir>/node-<i>` (the layout of `startKafka`); all
 * share one cluster id. Internal topics get replication factor 3 (or the node count) and the
 * brokers' `min.insync.replicas` is 2, so acks=all needs two copies.
 *
 * With `silentPaths`, each node also has a `PROXIED` client listener that advertises the port of a
 * silent proxy (`silent-proxy.ts`) in front of it: a client bootstrapped at `pathBootstrapServers`
 * reaches every broker only through the proxies, so `paths.hold()` partitions it from the cluster
 * (bytes silently held, nothing closed) while other clients and the replication between brokers go
 * on.
 *
 * @example
 * const cluster = await startKafkaCluster({ dataDir: tempDataDir('brokers') });
 * await cluster.nodes[1]!.kill(); // SIGKILL; start() brings it back on the same ports and data
 * await cluster.stop();
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type KafkaHandle, type KafkaOptions, newClusterId, startKafka } from './kafka.js';
import { freePort } from './ports.js';
import { type SilentProxy, startSilentProxy } from './silent-proxy.js';

export interface KafkaClusterOptions
  extends Pick<KafkaOptions, 'host' | 'heapOpts' | 'jvmOpts' | 'version' | 'startTimeoutMs' | 'log'> {
  dataDir: string;
  /** Nodes (brokers and voters); default 3. A majority must run for the cluster to change. */
  nodes?: number;
  /** A silent proxy in front of each node, advertised on a listener of its own (see above). */
  silentPaths?: boolean;
  /** Extra or overriding broker settings for every node. */
  settings?: Record<string, string>;
}

export interface KafkaNode extends KafkaHandle {
  nodeId: number;
}

export interface KafkaCluster {
  /** Every node's client listener, comma-separated (the `BROKER_BOOTSTRAP_SERVERS` form). */
  bootstrapServers: string;
  nodes: KafkaNode[];
  version: string;
  /** With `silentPaths`: the proxies' addresses, comma-separated; clients there can be partitioned. */
  pathBootstrapServers?: string;
  /** With `silentPaths`: holds or releases every node's proxy at once. */
  paths?: Pick<SilentProxy, 'hold' | 'release'>;
  /** Stops every node (in parallel) and closes the proxies; `start()` brings both back. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** The node whose `node.id` is `id`. */
  node(id: number): KafkaNode;
}

/**
 * Settings a node of an `n`-node cluster needs on top of `brokerSettings`: its id, the voters,
 * replicated internal topics, and `min.insync.replicas` 2.
 */
export function clusterSettings(opts: {
  nodeId: number;
  voters: string;
  nodes: number;
  listeners: string;
  advertised: string;
  protocolMap: string;
}): Record<string, string> {
  const replicas = String(Math.min(3, opts.nodes));
  const minIsr = String(Math.min(2, opts.nodes));
  return {
    'node.id': String(opts.nodeId),
    'controller.quorum.voters': opts.voters,
    listeners: opts.listeners,
    'advertised.listeners': opts.advertised,
    'listener.security.protocol.map': opts.protocolMap,
    'default.replication.factor': replicas,
    'offsets.topic.replication.factor': replicas,
    'transaction.state.log.replication.factor': replicas,
    'transaction.state.log.min.isr': minIsr,
    'min.insync.replicas': minIsr,
    // A killed node is fenced (its partitions led elsewhere) after 6 s instead of 9.
    'broker.session.timeout.ms': '6000',
    'broker.heartbeat.interval.ms': '1000',
  };
}

/**
 * Three JVMs on a small machine: a smaller heap, and only the quick JIT (C1), which halves the CPU
 * a start takes; a test cluster never needs C2's peak throughput. `heapOpts`/`jvmOpts` override.
 */
const CLUSTER_HEAP = '-Xms128m -Xmx384m';
const CLUSTER_JVM = ['-XX:TieredStopAtLevel=1'];

/** Starts `nodes` Kafka nodes in parallel (a quorum needs a majority up) and waits for all. */
export async function startKafkaCluster(opts: KafkaClusterOptions): Promise<KafkaCluster> {
  const dataDir = resolve(opts.dataDir);
  const count = opts.nodes ?? 3;
  if (!Number.isInteger(count) || count < 1)
    throw new Error(`nodes must be a positive integer, got ${count}`);
  const host = opts.host ?? '127.0.0.1';
  const ids = Array.from({ length: count }, (_, i) => i + 1);
  const ports = new Set<number>();
  const pick = async () => {
    let port = await freePort();
    while (ports.has(port)) port = await freePort();
    ports.add(port);
    return port;
  };
  const plan: { nodeId: number; port: number; controllerPort: number; pathPort: number }[] = [];
  for (const nodeId of ids) {
    plan.push({ nodeId, port: await pick(), controllerPort: await pick(), pathPort: await pick() });
  }
  const openProxies = (listen: { port?: number }[] = []) =>
    Promise.all(plan.map((n, i) => startSilentProxy({ host: '127.0.0.1', port: n.pathPort }, listen[i])));
  let proxies = opts.silentPaths ? await openProxies() : [];
  const voters = plan.map((n) => `${n.nodeId}@127.0.0.1:${n.controllerPort}`).join(',');
  const clusterId = newClusterId();

  let nodes: KafkaNode[];
  try {
    nodes = await Promise.all(
      plan.map(async (n, i) => {
        const nodeDir = join(dataDir, `node-${n.nodeId}`);
        mkdirSync(nodeDir, { recursive: true });
        writeFileSync(join(nodeDir, 'cluster-id'), `${clusterId}\n`);
        const proxy = proxies[i];
        const path = proxy ? [`PROXIED://127.0.0.1:${n.pathPort}`] : [];
        const advertisedPath = proxy ? [`PROXIED://127.0.0.1:${proxy.port}`] : [];
        const settings = clusterSettings({
          nodeId: n.nodeId,
          voters,
          nodes: count,
          listeners: [
            `PLAINTEXT://${host}:${n.port}`,
            ...path,
            `CONTROLLER://127.0.0.1:${n.controllerPort}`,
          ].join(','),
          advertised: [`PLAINTEXT://${host}:${n.port}`, ...advertisedPath].join(','),
          protocolMap: `PLAINTEXT:PLAINTEXT,${proxy ? 'PROXIED:PLAINTEXT,' : ''}CONTROLLER:PLAINTEXT`,
        });
        const handle = await startKafka({
          heapOpts: CLUSTER_HEAP,
          jvmOpts: CLUSTER_JVM,
          ...opts,
          dataDir: nodeDir,
          port: n.port,
          controllerPort: n.controllerPort,
          settings: { ...settings, ...opts.settings },
        });
        return { ...handle, nodeId: n.nodeId };
      }),
    );
  } catch (error) {
    await Promise.allSettled(proxies.map((p) => p.close()));
    throw error;
  }
  const started = nodes;
  const advertisedPorts = proxies.map((p) => ({ port: p.port }));
  return {
    bootstrapServers: started.map((n) => n.bootstrapServers).join(','),
    nodes: started,
    version: started[0]?.version ?? '',
    ...(opts.silentPaths && {
      pathBootstrapServers: proxies.map((p) => `127.0.0.1:${p.port}`).join(','),
      paths: {
        hold: () => {
          for (const p of proxies) p.hold();
        },
        release: () => {
          for (const p of proxies) p.release();
        },
      },
    }),
    async stop() {
      await Promise.all(started.map((n) => n.stop()));
      await Promise.all(proxies.map((p) => p.close()));
      proxies = [];
    },
    async start() {
      // The proxies again on the ports the brokers advertise.
      if (opts.silentPaths && proxies.length === 0) proxies = await openProxies(advertisedPorts);
      await Promise.all(started.map((n) => n.start()));
    },
    node(id) {
      const node = started.find((n) => n.nodeId === id);
      if (!node) throw new Error(`no Kafka node ${id} (nodes ${ids.join(', ')})`);
      return node;
    },
  };
}
