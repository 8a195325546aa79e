import { describe, expect, it } from 'vitest';
import { down, healthRoutes, up } from './index.js';

describe('health routes', () => {
  it('answers liveness without consulting any check', async () => {
    let consulted = 0;
    const app = healthRoutes({
      checks: {
        broker: () => {
          consulted++;
          return down('unreachable');
        },
      },
    });
    const res = await app.request('/health/live');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'UP' });
    expect(consulted).toBe(0);
  });

  it('lets a service shape the readiness body: 200 with broker reachable, 503 with broker unreachable', async () => {
    let reachable = true;
    const app = healthRoutes({
      checks: { broker: () => (reachable ? up('reachable') : down('unreachable')) },
    });
    let res = await app.request('/health/ready');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'UP', broker: 'reachable' });
    reachable = false;
    res = await app.request('/health/ready');
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ status: 'DOWN', broker: 'unreachable' });
  });

  it("puts a failing check's reason beside its fixed value, as <check>Reason", async () => {
    const app = healthRoutes({ checks: { broker: () => down('unreachable', 'authentication failed') } });
    const res = await app.request('/health/ready');
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({
      status: 'DOWN',
      broker: 'unreachable',
      brokerReason: 'authentication failed',
    });
  });

  it('reports each dependency separately, with a thrown error or a timeout as the failing reason', async () => {
    const app = healthRoutes({
      timeoutMs: 50,
      checks: {
        broker: async () => up(),
        database: async () => {
          throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
        },
        slow: () => new Promise(() => {}),
      },
    });
    const res = await app.request('/health/ready');
    expect(res.status).toBe(503);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.json()).toEqual({
      status: 'DOWN',
      broker: 'UP',
      database: 'connect ECONNREFUSED 127.0.0.1:5432',
      slow: 'timeout',
    });
  });

  it('is ready with no checks registered, and refuses a check named status', async () => {
    expect(await (await healthRoutes().request('/health/ready')).json()).toEqual({ status: 'UP' });
    expect(() => healthRoutes({ checks: { status: () => up() } })).toThrow(/status/);
  });
});
