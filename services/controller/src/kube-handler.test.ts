/** The Kubernetes handler on the in-memory API server: the finalizer, status writes, Events. */
import { createLogger } from '@event-observatory/service-kit';
import { describe, expect, it } from 'vitest';
import { KubeHandler, type StatusWriteCause } from './kube-handler.js';
import { API_VERSION, FINALIZER, KIND, PIPELINE_CREDENTIALS_LABEL, type Pipeline } from './pipeline/types.js';
import { FakeApiServer } from './testing/fake-api-server.js';

const log = createLogger({ service: 'controller', level: 'silent' });
const meta = { namespace: 'ns', name: 'p' };
const manifest: Omit<Pipeline, 'status'> = {
  apiVersion: API_VERSION,
  kind: KIND,
  metadata: meta,
  spec: { topics: [{ name: 't', partitions: 1, replicationFactor: 1 }] },
};

function setUp() {
  const server = new FakeApiServer();
  const writes: StatusWriteCause[] = [];
  const handler = new KubeHandler({ api: server, onStatusWrite: (cause) => writes.push(cause), log });
  return { server, handler, writes, pipeline: server.create(manifest) };
}

/** Changes the stored object behind `pipeline`'s back, so `pipeline` is stale. */
const touch = (server: FakeApiServer) =>
  server.update(meta, (p) => {
    p.metadata.labels = { touched: 'yes' };
  });

describe('KubeHandler', () => {
  it('adds and removes the finalizer, and writes nothing when it already is as wanted', async () => {
    const { server, handler, pipeline } = setUp();
    expect(await handler.setFinalizer(pipeline, false)).toBeUndefined();
    const held = (await handler.setFinalizer(pipeline, true)) as Pipeline;
    expect(held.metadata.finalizers).toEqual([FINALIZER]);
    expect(await handler.setFinalizer(held, true)).toBeUndefined();
    await handler.setFinalizer(held, false);
    expect(server.get(meta)?.metadata.finalizers).toBeUndefined();
  });

  it('refuses a finalizer change of a stale object with 409', async () => {
    const { server, handler, pipeline } = setUp();
    touch(server);
    await expect(handler.setFinalizer(pipeline, true)).rejects.toMatchObject({ code: 409 });
    expect(server.get(meta)?.metadata.finalizers).toBeUndefined();
  });

  it('writes a status only when it differs, whatever the order of keys or a null member, and counts each write by cause', async () => {
    const { handler, writes, pipeline } = setUp();
    const written = (await handler.writeStatus(
      pipeline,
      { topicsReady: '0/1', observedGeneration: 1 },
      'reconcile',
    )) as Pipeline;
    expect(written.status).toEqual({ topicsReady: '0/1', observedGeneration: 1 });
    const same = { observedGeneration: 1, topicsReady: '0/1', flow: null } as unknown as Pipeline['status'] &
      object;
    expect(await handler.writeStatus(written, same, 'reconcile')).toBeUndefined();
    await handler.writeStatus(written, { topicsReady: '1/1' }, 'flow');
    expect(writes).toEqual(['reconcile', 'flow']);
  });

  it('a status write of a stale object fails with 409, a reconcile write as a flow write', async () => {
    const { server, handler, pipeline } = setUp();
    touch(server);
    for (const cause of ['flow', 'reconcile'] as const)
      await expect(handler.writeStatus(pipeline, { topicsReady: '0/1' }, cause)).rejects.toMatchObject({
        code: 409,
      });
    expect(server.get(meta)?.status).toBeUndefined();
  });

  it('records Events, and an Event the API server refuses fails nothing', async () => {
    const { server, handler, pipeline } = setUp();
    server.failNext('event');
    await handler.event(pipeline, { type: 'Warning', reason: 'Lost', message: 'not recorded' });
    await handler.event(pipeline, { type: 'Normal', reason: 'TopicCreated', message: 'created t' });
    expect(server.events).toEqual([
      { object: 'ns/p', type: 'Normal', reason: 'TopicCreated', message: 'created t' },
    ]);
  });

  it('reads the Kafka security of spec.kafka from its Secrets', async () => {
    const { server, handler } = setUp();
    server.putSecret('ns', 'ca', { 'ca.crt': 'CA-PEM' }, { [PIPELINE_CREDENTIALS_LABEL]: 'true' });
    const secured = server.update(meta, (p) => {
      p.spec.kafka = { tls: { trustedCertificates: [{ secretName: 'ca', certificate: 'ca.crt' }] } };
    });
    expect(await handler.kafkaSecurity(secured)).toEqual({ protocol: 'SSL', tls: { ca: 'CA-PEM' } });
  });
});
