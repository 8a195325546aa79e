import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_METRICS_PORT, metricsPort, readConfig } from '../config/index.js';
import { createMetrics, METRICS_CONTENT_TYPE } from '../metrics/index.js';
import { serveMetrics } from './index.js';

describe('serveMetrics', () => {
  it('serves GET /metrics of the registry on its own port and nothing else', async () => {
    const { registry } = createMetrics({ service: 'test', version: '1.0.0' });
    const server = await serveMetrics(registry, { host: '127.0.0.1', port: 0 });
    try {
      const res = await fetch(`${server.url}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(METRICS_CONTENT_TYPE);
      expect(await res.text()).toMatch(/^process_cpu_user_seconds_total\{service="test",version="1.0.0"\} /m);
      for (const path of ['/', '/health/live', '/health/ready', '/admin/dlq', '/metrics/x']) {
        const other = await fetch(`${server.url}${path}`);
        expect(other.status, path).toBe(404);
        expect(((await other.json()) as { error: { status: string } }).error.status).toBe('NOT_FOUND');
      }
      const post = await fetch(`${server.url}/metrics`, { method: 'POST' });
      expect(post.status).toBe(405);
      await post.body?.cancel();
    } finally {
      await server.close();
    }
    await expect(fetch(`${server.url}/metrics`)).rejects.toThrow();
  });

  it('closes within about a second while a scraper keeps its connection open', async () => {
    const { registry } = createMetrics({ service: 'test', defaultMetrics: false });
    const server = await serveMetrics(registry, { host: '127.0.0.1', port: 0 });
    await (await fetch(`${server.url}/metrics`)).text(); // leaves an idle keep-alive connection
    const started = Date.now();
    await server.close();
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});

describe('metricsPort', () => {
  it('reads METRICS_PORT, default 9464, and refuses what is not a port', () => {
    expect(DEFAULT_METRICS_PORT).toBe(9464);
    expect(readConfig({}, { port: metricsPort() }).port).toBe(9464);
    expect(readConfig({ METRICS_PORT: '9100' }, { port: metricsPort() }).port).toBe(9100);
    expect(() => readConfig({ METRICS_PORT: '70000' }, { port: metricsPort() })).toThrow(ConfigError);
    expect(() => readConfig({ METRICS_PORT: '70000' }, { port: metricsPort() })).toThrow(/^METRICS_PORT: /);
  });
});
