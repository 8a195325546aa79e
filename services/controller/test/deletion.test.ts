/** The deletion policies through the whole loop (fast-tier.ts): the finalizer, and what happens to the topics. */
import { describe, expect, it, vi } from 'vitest';
import { KafkaHandler, type KafkaTarget } from '../src/kafka-handler.js';
import { CONTROLLER_ANNOTATION, FINALIZER, PAUSE_ANNOTATION, type Pipeline } from '../src/pipeline/types.js';
import { FakeApiServer } from '../src/testing/fake-api-server.js';
import {
  afterTest,
  bareReconciler,
  bootstrapServers,
  CONTROLLER_NAME,
  condition,
  createServedTopics,
  createWithTopic,
  kafkaTopic,
  log,
  meta,
  PATIENCE,
  pipeline,
  startController,
  topicName,
  useFastTier,
  waitReady,
} from './fast-tier.js';

useFastTier();

describe('deletion policy', () => {
  it('Retain: no finalizer, the Pipeline goes at once and its topics stay; switching to Delete adds the finalizer, back removes it', async () => {
    const { server, metric } = startController();
    const kept = createWithTopic(server, 'retainer');
    expect((await waitReady(server, 'retainer', 'True')).metadata.finalizers).toBeUndefined();

    const policy = (deletionPolicy: 'Retain' | 'Delete') =>
      server.update(meta('retainer'), (p) => {
        p.spec.deletionPolicy = deletionPolicy;
      });
    policy('Delete');
    await vi.waitFor(
      () => expect(server.get(meta('retainer'))?.metadata.finalizers).toEqual([FINALIZER]),
      PATIENCE,
    );
    policy('Retain');
    await vi.waitFor(
      () => expect(server.get(meta('retainer'))?.metadata.finalizers).toBeUndefined(),
      PATIENCE,
    );

    server.delete(meta('retainer'));
    expect(server.get(meta('retainer'))).toBeUndefined();
    await vi.waitFor(async () => expect(await metric('controller_topics_managed')).toBe(0), PATIENCE);
    expect((await kafkaTopic(kept))?.partitions).toBe(1);
  });

  it('a Pipeline deleted while its reconcile is under way is not counted again when the reconcile ends', async () => {
    /** The real handler, except that `apply` waits while `gate` is set. */
    class GatedApply extends KafkaHandler {
      gate: Promise<void> | undefined;
      entered = () => {};
      constructor() {
        super({ clientId: 'controller-fast-gated', requestTimeoutMs: 5_000, logger: log });
      }
      override async apply(...args: Parameters<KafkaHandler['apply']>) {
        if (this.gate) {
          this.entered();
          await this.gate;
        }
        return super.apply(...args);
      }
    }
    const kafka = new GatedApply();
    afterTest(() => kafka.close());
    const { server, metric } = startController({ kafka });
    createWithTopic(server, 'racer');
    await waitReady(server, 'racer', 'True');
    await vi.waitFor(async () => expect(await metric('controller_topics_managed')).toBe(1), PATIENCE);

    let release = () => {};
    kafka.gate = new Promise((resolve) => {
      release = resolve;
    });
    const entered = new Promise<void>((resolve) => {
      kafka.entered = resolve;
    });
    const reconciled = await metric('controller_reconciles_total', { outcome: 'success' });
    // A change of nothing the status shows: the reconcile ends without writing to the API server.
    server.update(meta('racer'), (p) => {
      p.metadata.annotations = { ...p.metadata.annotations, 'example.com/note': 'touched' };
    });
    await entered;
    server.delete(meta('racer'));
    await vi.waitFor(async () => expect(await metric('controller_topics_managed')).toBe(0), PATIENCE);
    kafka.gate = undefined;
    release();
    await vi.waitFor(
      async () =>
        expect(await metric('controller_reconciles_total', { outcome: 'success' })).toBe(reconciled + 1),
      PATIENCE,
    );
    expect(await metric('controller_topics_managed')).toBe(0);
  });

  it('Delete: the finalizer holds the Pipeline until its topics are deleted', async () => {
    const { server } = startController();
    const doomed = createWithTopic(server, 'deleter', {
      deletionPolicy: 'Delete',
    });
    expect((await waitReady(server, 'deleter', 'True')).metadata.finalizers).toEqual([FINALIZER]);
    expect(await kafkaTopic(doomed)).toBeDefined();

    server.delete(meta('deleter'));
    expect(server.get(meta('deleter'))?.metadata.deletionTimestamp).toBeDefined(); // held
    await vi.waitFor(() => expect(server.get(meta('deleter'))).toBeUndefined(), PATIENCE);
    expect(await kafkaTopic(doomed)).toBeUndefined();
    expect(server.events.filter((e) => e.reason === 'TopicDeleted').map((e) => e.message)).toEqual([
      `deleted ${doomed}`,
    ]);
  });

  it('a Pipeline let go is not finalized again from a cache that still shows its finalizer: a topic made since under that name stays', async () => {
    const server = new FakeApiServer();
    const reconciler = bareReconciler(server);
    const name = topicName('let-go');
    const created = server.create(
      pipeline(
        'let-go',
        [{ name, partitions: 1, replicationFactor: 1 }],
        { deletionPolicy: 'Delete' },
        { [CONTROLLER_ANNOTATION]: CONTROLLER_NAME },
      ),
    );
    await reconciler.reconcile(created, [created]);
    server.delete(meta('let-go'));
    const deleting = server.get(meta('let-go')) as Pipeline;
    await reconciler.reconcile(deleting, [deleting]);
    expect(server.get(meta('let-go'))).toBeUndefined();
    expect(await kafkaTopic(name)).toBeUndefined();

    // Someone makes a topic of that name; the cache, behind, still shows the Pipeline being deleted.
    await createServedTopics([name], 2);
    expect(await reconciler.reconcile(deleting, [deleting])).toEqual({ outcome: 'skipped', managed: 0 });
    expect((await kafkaTopic(name))?.partitions).toBe(2);
  });

  it('Delete while paused: the finalizer goes, the topics stay', async () => {
    const { server } = startController();
    const paused = createWithTopic(server, 'careful', {
      deletionPolicy: 'Delete',
    });
    await waitReady(server, 'careful', 'True');
    server.update(meta('careful'), (p) => {
      p.metadata.annotations = { [PAUSE_ANNOTATION]: 'true' };
    });
    await vi.waitFor(
      () => expect(condition(server.get(meta('careful')), 'ReconciliationPaused')?.status).toBe('True'),
      PATIENCE,
    );
    server.delete(meta('careful'));
    await vi.waitFor(() => expect(server.get(meta('careful'))).toBeUndefined(), PATIENCE);
    expect(await kafkaTopic(paused)).toBeDefined();
    expect(server.events.find((e) => e.reason === 'TopicsRetained')?.message).toBe(
      `kept ${paused}: reconciliation is paused`,
    );
  });
});

describe('deletion that cannot get stuck', () => {
  /** The real handler, except that deleting topics fails at once, or never answers. */
  class BrokenDeletes extends KafkaHandler {
    /** When each delete was asked for (epoch ms). */
    readonly attempts: number[] = [];
    constructor(private readonly hang: boolean) {
      super({ clientId: 'controller-fast-broken', requestTimeoutMs: 5_000, logger: log });
    }
    override delete(_target: KafkaTarget, _names: string[]): Promise<string[]> {
      this.attempts.push(Date.now());
      return this.hang ? new Promise(() => {}) : Promise.reject(new Error('broker down'));
    }
  }
  const BOUND_MS = 1_500;
  /**
   * How late after the deadline the Pipeline may go: a timer never fires early, so an uncapped
   * retry (at 3 s, below) is never inside it, and a busy machine (these suites run again beside
   * the cluster suites) gets all the room up to there.
   */
  const LATE_MS = 1_400;

  /** A Delete Pipeline, Ready, then deleted on a loop whose deletes fail: how long until it is gone. */
  async function deleteAgainst(kafka: BrokenDeletes, name: string) {
    afterTest(() => kafka.close());
    // A backoff whose next retry after the first failures falls well past the bound.
    const { server } = startController({
      kafka,
      deletionTimeoutMs: BOUND_MS,
      backoff: { initialMs: 1_000, maxMs: 60_000 },
    });
    const topic = createWithTopic(server, name, { deletionPolicy: 'Delete' });
    await waitReady(server, name, 'True');
    const asked = Date.now();
    server.delete(meta(name));
    await vi.waitFor(() => expect(server.get(meta(name))).toBeUndefined(), { timeout: 10_000, interval: 20 });
    const tookMs = Date.now() - asked;
    const lefts = server.events.filter((e) => e.reason === 'TopicsLeftBehind');
    expect(lefts).toHaveLength(1); // also when the finalizer patch was retried
    return { tookMs, topic, left: lefts[0], deadline: asked + BOUND_MS };
  }

  it('a failing deletion is retried no later than its deadline and let go at the deadline, not at the first retry after it', async () => {
    const kafka = new BrokenDeletes(false);
    const { tookMs, topic, left, deadline } = await deleteAgainst(kafka, 'bounded');
    // Without the cap: failures at 0 and 1 s, the next retry 2 s later, at 3 s.
    // (A finalizer patch refused with 409 on a stale object is tried again within 250 ms.)
    expect(tookMs).toBeGreaterThanOrEqual(BOUND_MS - 50);
    expect(tookMs).toBeLessThan(BOUND_MS + LATE_MS);
    // The failure and the backoff's retry, and none at or after the deadline. (A busy machine saw a
    // third attempt before the deadline, likely a watch event arriving after a reconcile began,
    // which reconciles again at once.)
    expect(kafka.attempts.length).toBeGreaterThanOrEqual(2);
    expect(kafka.attempts.filter((at) => at >= deadline)).toEqual([]);
    expect(left?.message).toBe(
      `deletion failed for 2 s (broker down): left ${topic} in Kafka ${bootstrapServers}`,
    );
    expect(await kafkaTopic(topic)).toBeDefined();
  });

  it('an attempt still under way at the deadline is not waited for', async () => {
    const kafka = new BrokenDeletes(true);
    const { tookMs, topic, left } = await deleteAgainst(kafka, 'hanging');
    // (A finalizer patch refused with 409 on a stale object is tried again within 250 ms.)
    expect(tookMs).toBeGreaterThanOrEqual(BOUND_MS - 50);
    expect(tookMs).toBeLessThan(BOUND_MS + LATE_MS);
    expect(left?.message).toBe(
      `deletion failed for 2 s (no answer from Kafka before the deadline): left ${topic} in Kafka ${bootstrapServers}`,
    );
  });

  it('a controller that first tries after the deadline tries once, and waits for that attempt no longer than the bound', async () => {
    const server = new FakeApiServer();
    const topic = createWithTopic(server, 'late', { deletionPolicy: 'Delete' });
    const declared = server.get(meta('late')) as Pipeline;
    await bareReconciler(server).reconcile(declared, [declared]);
    server.delete(meta('late'));
    const deleting = server.get(meta('late')) as Pipeline;

    // A controller started after the deadline, whose one attempt never answers.
    const kafka = new BrokenDeletes(true);
    afterTest(() => kafka.close());
    const late = bareReconciler(server, {
      kafka,
      deletionTimeoutMs: BOUND_MS,
      now: () => new Date(Date.now() + 2 * BOUND_MS),
    });
    const started = Date.now();
    await late.reconcile(deleting, [deleting]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(BOUND_MS - 50);
    expect(kafka.attempts).toHaveLength(1);
    expect(server.get(meta('late'))).toBeUndefined();
    expect(server.events.find((e) => e.reason === 'TopicsLeftBehind')?.message).toBe(
      `deletion failed for 2 s (no answer from Kafka before the deadline): left ${topic} in Kafka ${bootstrapServers}`,
    );
    expect(await kafkaTopic(topic)).toBeDefined();
  });
});
