/**
 * The informer's restarts through the whole loop (fast-tier.ts): a failed list, a resumed watch,
 * `410 Gone` after compaction and a silent watch caught by the stall watchdog.
 */
import { describe, expect, it, vi } from 'vitest';
import {
  createWithTopic,
  kafkaTopic,
  meta,
  PATIENCE,
  setPartitions,
  startController,
  useFastTier,
  waitReady,
} from './fast-tier.js';

useFastTier();

describe('the informer', () => {
  it('a failed list is retried after the backoff', async () => {
    const { server, metric } = startController();
    server.failNext('listPipelines');
    createWithTopic(server, 'listed');
    await waitReady(server, 'listed', 'True');
    expect(await metric('controller_watch_restarts_total', { reason: 'error' })).toBe(1);
  });
});

describe('the watch', () => {
  it('410 Gone after the history was compacted: lists again and reconciles what changed meanwhile', async () => {
    const { server, metric } = startController();
    const a = createWithTopic(server, 'changed');
    const b = createWithTopic(server, 'removed', { deletionPolicy: 'Delete' });
    await waitReady(server, 'changed', 'True');
    await waitReady(server, 'removed', 'True');

    // The connection drops; before the controller watches again, three changes are made and the
    // history that held them is compacted away, so it cannot resume where it was.
    expect(server.endWatches()).toBe(1);
    setPartitions(server, 'changed', 0, 2);
    server.delete(meta('removed'));
    const c = createWithTopic(server, 'added');
    server.compact();

    await waitReady(server, 'added', 'True');
    await waitReady(server, 'changed', 'True');
    await vi.waitFor(() => expect(server.get(meta('removed'))).toBeUndefined(), PATIENCE);
    expect((await kafkaTopic(a))?.partitions).toBe(2);
    expect((await kafkaTopic(c))?.partitions).toBe(1);
    expect(await kafkaTopic(b)).toBeUndefined();
    expect(await metric('controller_watch_restarts_total', { reason: 'gone' })).toBe(1);
    expect(server.openWatches).toBe(1);
  });

  it('resumes a watch the server ended, and lists again after one that went silent (stalled)', async () => {
    const { server, metric } = startController({ watchTimeoutMs: 1_000, stallMs: 2_000 });
    const quiet = createWithTopic(server, 'watched');
    await waitReady(server, 'watched', 'True');
    // The server ends each watch after its 1 s timeout; the informer watches on from where it was.
    await vi.waitFor(() => expect(server.watchesStarted).toBeGreaterThanOrEqual(2), { timeout: 5_000 });
    setPartitions(server, 'watched', 0, 2);
    await vi.waitFor(async () => expect((await kafkaTopic(quiet))?.partitions).toBe(2), PATIENCE);
    expect(await metric('controller_watch_restarts_total')).toBe(0); // resumed, never listed again

    // Frozen: nothing arrives and nothing ends; only the stall watchdog ends it and lists again.
    expect(server.freezeWatches()).toBe(1);
    setPartitions(server, 'watched', 0, 3);
    await vi.waitFor(async () => expect((await kafkaTopic(quiet))?.partitions).toBe(3), PATIENCE);
    expect(await metric('controller_watch_restarts_total', { reason: 'stalled' })).toBe(1);
  });
});
