/**
 * The in-memory API server keeps the rules of the real one that the controller relies on; if it
 * did not, the fast tier would prove the controller against an API server that does not exist.
 */
import { describe, expect, it } from 'vitest';
import type { PipelineWatchEvent } from '../kube/api.js';
import { API_VERSION, KIND, type Pipeline } from '../pipeline/types.js';
import { FakeApiServer } from './fake-api-server.js';

const meta = { namespace: 'ns', name: 'p' };
const spec = { topics: [{ name: 't', partitions: 1, replicationFactor: 1 }] };
const manifest = { apiVersion: API_VERSION, kind: KIND, metadata: meta, spec } as const;

/** Opens a watch from `resourceVersion` and collects what it delivers until it ends. */
async function watchFrom(server: FakeApiServer, resourceVersion: string, timeoutSeconds = 60) {
  const events: PipelineWatchEvent[] = [];
  let ended: (() => void) | undefined;
  const end = new Promise<void>((resolve) => {
    ended = resolve;
  });
  const request = await server.watchPipelines(
    'ns',
    { resourceVersion, allowWatchBookmarks: true, timeoutSeconds },
    (event) => events.push(event),
    () => ended?.(),
  );
  return { events, end, request };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('FakeApiServer', () => {
  it('raises resourceVersion with every change and generation with spec changes only', async () => {
    const server = new FakeApiServer();
    const created = server.create(manifest);
    expect(created.metadata).toMatchObject({ generation: 1, resourceVersion: '1' });
    const labelled = server.update(meta, (p) => {
      p.metadata.labels = { a: 'b' };
    });
    expect(labelled.metadata).toMatchObject({ generation: 1, resourceVersion: '2' });
    const status = await server.patchStatus(labelled, { topicsReady: '0/1' });
    expect(status.metadata).toMatchObject({ generation: 1, resourceVersion: '3' });
    const grown = server.update(meta, (p) => {
      p.spec.topics[0] = { name: 't', partitions: 2, replicationFactor: 1 };
    });
    expect(grown.metadata).toMatchObject({ generation: 2, resourceVersion: '4' });
    expect(grown.status).toEqual({ topicsReady: '0/1' });
  });

  it('merge-patches status: lists replaced whole, null removes a key, no change keeps the version', async () => {
    const server = new FakeApiServer();
    const p = server.create(manifest);
    const first = await server.patchStatus(p, {
      topics: [{ name: 'a', phase: 'Ready' }],
      topicsReady: '1/1',
    });
    const second = await server.patchStatus(first, {
      topics: [{ name: 'b', phase: 'Error' }],
      topicsReady: null,
    } as unknown as Pipeline['status'] & object);
    expect(second.status).toEqual({ topics: [{ name: 'b', phase: 'Error' }] });
    const same = await server.patchStatus(second, { topics: [{ name: 'b', phase: 'Error' }] });
    expect(same.metadata.resourceVersion).toBe(second.metadata.resourceVersion);
  });

  it('refuses a finalizer, annotation or status patch of a stale object with 409; an annotation patch may skip the check', async () => {
    const server = new FakeApiServer();
    const stale = server.create({ ...manifest, metadata: { ...manifest.metadata, annotations: { x: '1' } } });
    server.update(meta, (p) => {
      p.metadata.labels = { a: 'b' };
    });
    await expect(server.setFinalizers(stale, ['f'])).rejects.toMatchObject({ code: 409 });
    await expect(server.setAnnotations(stale, { y: '2' })).rejects.toMatchObject({ code: 409 });
    await expect(server.patchStatus(stale, { topicsReady: '0/1' })).rejects.toMatchObject({ code: 409 });
    const fresh = server.get(meta) as Pipeline;
    expect((await server.setFinalizers(fresh, ['f'])).metadata.finalizers).toEqual(['f']);
    const merged = await server.setAnnotations(stale, { y: '2' }, { ifUnchanged: false });
    expect(merged.metadata.annotations).toEqual({ x: '1', y: '2' });
  });

  it('holds a deleted object until its last finalizer is removed', async () => {
    const server = new FakeApiServer();
    const p = await server.setFinalizers(server.create(manifest), ['f']);
    server.delete(meta);
    const deleting = server.get(meta) as Pipeline;
    expect(deleting.metadata.deletionTimestamp).toBeDefined();
    expect(deleting.metadata.generation).toBe((p.metadata.generation ?? 0) + 1);
    await server.setFinalizers(deleting, []);
    expect(server.get(meta)).toBeUndefined();
  });

  it('replays a watch from its resourceVersion, answers 410 once that history is compacted, ends at its timeout', async () => {
    const server = new FakeApiServer();
    const created = server.create(manifest);
    server.update(meta, (p) => {
      p.metadata.labels = { a: 'b' };
    });
    const replay = await watchFrom(server, created.metadata.resourceVersion as string);
    await settle();
    expect(replay.events.map((e) => [e.type, e.object.metadata.resourceVersion])).toEqual([
      ['MODIFIED', '2'],
    ]);
    server.delete(meta);
    await settle();
    expect(replay.events.map((e) => e.type)).toEqual(['MODIFIED', 'DELETED']);
    replay.request.abort();
    await replay.end;

    server.compact();
    const gone = await watchFrom(server, created.metadata.resourceVersion as string);
    await gone.end;
    expect(gone.events).toMatchObject([{ type: 'ERROR', object: { code: 410 } }]);

    const timed = await watchFrom(server, String(3), 1);
    const started = Date.now();
    await timed.end;
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('fails the next call of a kind once when told to', async () => {
    const server = new FakeApiServer();
    server.failNext('listPipelines');
    await expect(server.listPipelines('')).rejects.toMatchObject({ code: 500 });
    await expect(server.listPipelines('')).resolves.toEqual({ items: [], resourceVersion: '0' });
  });
});
