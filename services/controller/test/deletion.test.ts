/** The deletion policies through the whole loop (fast-tier.ts): the finalizer, and what happens to the topics. */
import { describe, expect, it, vi } from 'vitest';
import { FINALIZER, PAUSE_ANNOTATION } from '../src/pipeline/types.js';
import {
  condition,
  createWithTopic,
  kafkaTopic,
  meta,
  PATIENCE,
  startController,
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
