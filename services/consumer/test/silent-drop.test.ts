/**
 * The database path going silent under the consumer (a proxy that stops forwarding without
 * closing, as a dropped route does): the batch write stuck on such a connection fails within the
 * write pool's bound, the connection is dropped, and the retry stores the batch on a fresh one,
 * instead of hanging for TCP's ~15 minutes while the broker heartbeats keep the partitions.
 */
import { type SilentProxy, startSilentProxy } from '@event-observatory/devstack';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Harness, startHarness, testEvent, waitFor } from './harness.js';

let proxy: SilentProxy;
let h: Harness;

beforeAll(async () => {
  const direct = new URL(inject('stack').databaseUrl);
  proxy = await startSilentProxy({ host: direct.hostname, port: Number(direct.port) });
  h = await startHarness('silent', {
    // Bound on one statement's answer: 500 ms + 500 ms.
    env: { DATABASE_STATEMENT_TIMEOUT: '500ms', DATABASE_IDLE_IN_TRANSACTION_TIMEOUT: '1s' },
    serviceDatabaseUrl: (url) => {
      const proxied = new URL(url);
      proxied.port = String(proxy.port);
      return proxied.toString();
    },
  });
});

afterAll(async () => {
  await h?.close().catch(() => {});
  await proxy?.close();
});

describe('a silent drop of the database connections', () => {
  it('ends the stuck write in bounded time and stores the batch through a new connection', async () => {
    await h.publish([testEvent(1)]);
    await waitFor('the first event stored', async () => (await h.count()) === 1);
    proxy.freeze();
    const frozenAt = Date.now();
    await h.publish([testEvent(2), testEvent(3)]);
    // Each pooled connection (6 at most) costs one bound before it is dropped.
    await waitFor('the batch stored after the drop', async () => (await h.count()) === 3, 20_000);
    expect(Date.now() - frozenAt).toBeLessThan(20_000);
  });
});
