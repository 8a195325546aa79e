/**
 * vitest global setup of the cluster suites: a cluster (started, reused, or KUBECONFIG's), the
 * platform's images in it (built here unless KUBECONFIG was given), and one devstack Kafka +
 * PostgreSQL listening on this machine's own address so that pods reach them (Kafka also with
 * its SASL_SSL and SSL listeners, certificates naming that address). Everything this
 * setup started is stopped at the end.
 */
import { rmSync } from 'node:fs';
import { type SecuredListeners, startStack, tempDataDir } from '@event-observatory/devstack';
import type { TestProject } from 'vitest/node';
import { buildImages, clusterSetting, hostAddress, startOrReuseCluster } from './lib/cluster.js';

declare module 'vitest' {
  export interface ProvidedContext {
    cluster: {
      kubeconfig: string;
      local: boolean;
      /** The pinned version when the cluster is ours (scripts/versions.sh). */
      version: string;
      images: { ingest: string; consumer: string; controller: string };
    };
    podStack: {
      bootstrapServers: string;
      databaseUrl: string;
      host: string;
      /** The same broker's SASL_SSL and SSL listeners (devstack `secured`), their CA and users. */
      secured: SecuredListeners;
    };
  }
}

const log = (line: string) => process.stderr.write(`[cluster setup] ${line}\n`);

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const t0 = Date.now();
  const cluster = await startOrReuseCluster({ log });
  const closers: (() => Promise<unknown>)[] = [() => cluster.stop()];
  const teardown = async () => {
    for (const close of closers.reverse()) await close().catch((e: Error) => log(`teardown: ${e.message}`));
  };
  try {
    log(`cluster ready after ${Math.round((Date.now() - t0) / 1000)} s (${cluster.origin})`);
    if (cluster.local) {
      const t1 = Date.now();
      await buildImages(log);
      log(`images built and imported in ${Math.round((Date.now() - t1) / 1000)} s`);
    }
    const host = await hostAddress();
    const dataDir = tempDataDir('podstack'); // usable by PostgreSQL's own user when we are root
    closers.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    const stack = await startStack({
      dataDir,
      host,
      // The pods' addresses (our cluster) or anywhere (someone else's cluster, e.g. kind's network).
      postgres: { allowedClients: [cluster.local ? clusterSetting('POD_CIDR') : '0.0.0.0/0'] },
      // One broker for every suite: PLAINTEXT, and SASL_SSL / SSL for the chart's secured install.
      kafka: { secured: {} },
    });
    if (!stack.kafka.secured) throw new Error('the devstack Kafka started without its secured listeners');
    closers.push(() => stack.stop());
    const prefix = process.env.IMAGE_PREFIX ?? 'localhost/observatory';
    const tag = process.env.IMAGE_TAG ?? 'dev';
    project.provide('cluster', {
      kubeconfig: cluster.kubeconfig,
      local: cluster.local,
      version: clusterSetting('K8S_VERSION'),
      images: {
        ingest: `${prefix}/ingest:${tag}`,
        consumer: `${prefix}/consumer:${tag}`,
        controller: `${prefix}/controller:${tag}`,
      },
    });
    project.provide('podStack', {
      bootstrapServers: stack.bootstrapServers,
      databaseUrl: stack.databaseUrl,
      host,
      secured: stack.kafka.secured,
    });
  } catch (error) {
    await teardown();
    throw error;
  }
  return teardown;
}
