/**
 * What the suites that scale the consumer share (consumer-scaling.test.ts: the Deployment scaled
 * by hand; keda.test.ts: scaled by KEDA on the group's lag), as their fixture (a ClusterSuite):
 * the chart installed against the run's topic with 12 partitions (and its `.dlq`; controller off,
 * one pod of each component) and a database of its own; the group's lag and its members'
 * partitions read from the broker; the consumer pods' duplicate meters; the store's count of each
 * acknowledged id.
 */
import { kafkaClient } from '@event-observatory/devstack';
import { randomDevSecret } from '@event-observatory/service-kit';
import { type Admin, AssignerProtocol } from 'kafkajs';
import type pg from 'pg';
import { expect, vi } from 'vitest';
import { ingestToken } from './cloudevents.js';
import { baseInstall, setArgs } from './helm.js';
import { createPipelineTopics } from './kafka.js';
import type { TestNamespace } from './kube.js';
import { ClusterSuite } from './suite.js';

export const PARTITIONS = 12;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const waitFor = <T>(check: () => Promise<T>, timeout: number) =>
  vi.waitFor(check, { timeout, interval: 1_000 });

/** Call at module level; `install()` in beforeAll (its afterAll undoes it). */
export class ConsumerScalingSuite extends ClusterSuite {
  /** The consumer Deployment, and its pods' label selector. */
  readonly consumer: string;
  readonly consumerPods: string;
  readonly admin: Admin;
  ns!: TestNamespace;
  db!: pg.Pool;
  /** A token with `events:write` for ingest. */
  token!: string;

  /** `name`: the ClusterSuite's; `release`: the Helm release's. */
  constructor(
    name: string,
    readonly release: string,
    opts: ConstructorParameters<typeof ClusterSuite>[1] = {},
  ) {
    super(name, opts);
    this.consumer = `${release}-consumer`;
    this.consumerPods = `app.kubernetes.io/instance=${release},app.kubernetes.io/name=consumer`;
    this.admin = kafkaClient(this.podStack.bootstrapServers, { clientId: `${name}-e2e` }).admin();
  }

  /**
   * The namespace, the topics, the database, the release's Secret and `helm install` (one pod of
   * each component, the consumer's group and topic the suite's) with `values` over those and
   * `args` after them (the last `--set-json` of a key wins).
   */
  async install(values: Record<string, string | number | boolean>, args: string[] = []): Promise<void> {
    const t0 = Date.now();
    await this.admin.connect();
    this.onCleanup(async () => {
      await this.admin.deleteTopics({ topics: [this.topic, `${this.topic}.dlq`] }).catch(() => {});
      await this.admin.deleteGroups([this.groupId]).catch(() => {});
      await this.admin.disconnect();
    });
    this.ns = await this.namespace();
    await createPipelineTopics(this.podStack.bootstrapServers, this.topic, PARTITIONS);
    const databaseUrl = await this.database();
    this.db = this.pool(databaseUrl);
    const authSecret = randomDevSecret();
    this.token = await ingestToken(authSecret);
    const base = await baseInstall(this.cluster.images, {
      ns: this.ns,
      name: `${this.name}-secrets`,
      databaseUrl,
      authSecret,
    });
    await this.helmInstall(this.release, this.ns, [
      ...setArgs({
        ...base.values,
        'kafka.bootstrapServers': this.podStack.bootstrapServers,
        'kafka.groupId': this.groupId,
        'pipeline.create': false,
        'pipeline.topic': this.topic,
        'controller.enabled': false,
        'ingest.replicas': 1,
        'consumer.replicas': 1,
        'search.replicas': 1,
        ...values,
      }),
      ...base.resourceArgs,
      ...args,
    ]);
    this.log(`installed in ${Math.round((Date.now() - t0) / 1000)} s`);
  }

  /** The ingest Service's `clusterIP:port`, once it accepts connections. */
  ingest(): Promise<string> {
    return this.kube.serviceAddress(this.ns.name, `${this.release}-ingest`, 8080);
  }

  /** Records the group has not committed yet, over every partition of the topic. */
  async groupLag(): Promise<number> {
    const [ends, [committed]] = await Promise.all([
      this.admin.fetchTopicOffsets(this.topic),
      this.admin.fetchOffsets({ groupId: this.groupId, topics: [this.topic] }),
    ]);
    const done = new Map(committed?.partitions.map((p) => [p.partition, Number(p.offset)]));
    return ends.reduce(
      (lag, p) => lag + Number(p.high) - Math.max(done.get(p.partition) ?? 0, Number(p.low)),
      0,
    );
  }

  /** The group's members and the partitions each one holds (RoundRobinAssigner's encoding). */
  async assignments(): Promise<number[][]> {
    const { groups } = await this.admin.describeGroups([this.groupId]);
    return (groups[0]?.members ?? []).map(
      (m) => AssignerProtocol.MemberAssignment.decode(m.memberAssignment)?.assignment[this.topic] ?? [],
    );
  }

  /** Waits until `members` members hold the 12 partitions, each some; returns their shares. */
  shared(members: number, timeout: number): Promise<number[][]> {
    return waitFor(async () => {
      const shares = await this.assignments();
      expect(shares).toHaveLength(members);
      expect(shares.flat().sort((a, b) => a - b)).toEqual([...Array(PARTITIONS).keys()]);
      for (const s of shares) expect(s.length).toBeGreaterThan(0);
      return shares;
    }, timeout);
  }

  /** Waits until the group's lag is 0. */
  drained(timeout: number): Promise<number> {
    return waitFor(async () => {
      const lag = await this.groupLag();
      expect(lag, 'group lag').toBe(0);
      return lag;
    }, timeout);
  }

  /**
   * Reads consume_records_duplicate_total from every consumer pod every second; a counter only
   * grows, so the last reading of each pod (also of pods scaled away) is its total.
   */
  watchDuplicateMeters() {
    const last = new Map<string, number>();
    let stopped = false;
    const loop = (async () => {
      while (!stopped) {
        const pods = await this.kube
          .getJson<{ items: { metadata: { name: string }; status: { podIP?: string } }[] }>([
            'pods',
            '--namespace',
            this.ns.name,
            '-l',
            this.consumerPods,
          ])
          .catch(() => ({ items: [] }));
        await Promise.all(
          pods.items.map(async (p) => {
            if (!p.status.podIP) return;
            const text = await fetch(`http://${p.status.podIP}:9464/metrics`, {
              signal: AbortSignal.timeout(2_000),
            })
              .then((r) => r.text())
              .catch(() => '');
            const match = /^consume_records_duplicate_total(?:\{[^}]*\})? (\d+)/m.exec(text);
            if (match) last.set(p.metadata.name, Number(match[1]));
          }),
        );
        await sleep(1_000);
      }
    })();
    return {
      pods: last,
      /** The sum of the pods' last readings. */
      total: () => [...last.values()].reduce((a, b) => a + b, 0),
      stop: async () => {
        stopped = true;
        await loop;
      },
    };
  }

  /**
   * Waits until every id of `acknowledged` is in the store; returns each one's row count and the
   * (source, id) pairs stored more than once in the whole store (a refused request may still have
   * been stored: once).
   */
  async stored(acknowledged: string[], timeout: number) {
    const counts = await waitFor(async () => {
      const { rows } = await this.db.query<{ ce_id: string; n: string }>(
        // sql-witness: counts what the deployed consumers stored, in its own SQL.
        'SELECT ce_id, count(*) AS n FROM events.cloud_event WHERE ce_id = ANY($1) GROUP BY ce_id',
        [acknowledged],
      );
      expect(rows.length, 'acknowledged events in the store').toBe(acknowledged.length);
      return rows;
    }, timeout);
    const { rows: twice } = await this.db.query<{ ce_id: string }>(
      'SELECT ce_id FROM events.cloud_event GROUP BY ce_source, ce_id HAVING count(*) > 1',
    );
    return { counts, twice };
  }
}
