import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { DEFAULT_ALLOWED_HOSTS } from './config.js';
import { allowedHosts, hostMatcher, hostName } from './hosts.js';

describe('allowed hosts', () => {
  const allowed = hostMatcher(DEFAULT_ALLOWED_HOSTS.split(','));

  it('allows the default hosts with or without a port, in any letter case', () => {
    for (const host of [
      'localhost',
      'LOCALHOST:9000',
      '127.0.0.1:9000',
      'local',
      'printer.local',
      'a.b.local:80',
    ]) {
      expect(allowed(host), host).toBe(true);
    }
  });

  it('refuses hosts that only look like an allowed one', () => {
    for (const host of [
      'evil.com',
      'localhost.evil.com',
      'evillocal',
      '127.0.0.2',
      '[::1]:9000',
      '',
      ':9000',
    ]) {
      expect(allowed(host), host).toBe(false);
    }
    expect(allowed(undefined)).toBe(false);
  });

  it('reads IPv6 literals and a trailing dot', () => {
    expect(hostName('[::1]:9000')).toBe('::1');
    expect(hostName('Localhost.:9000')).toBe('localhost');
    expect(hostMatcher(['::1'])('[::1]:9000')).toBe(true);
  });

  it("admits every name the chart's default list gives a pod: the Service's names, its ClusterIP, the pod IP, loopback", () => {
    // The chart's ALLOWED_HOSTS for release obs in namespace ns, with the ClusterIP and the pod IP
    // the kubelet substitutes (cdk8s/test/values.test.ts checks the chart writes this list).
    const chart = hostMatcher(
      'obs-search,obs-search.ns,obs-search.ns.svc,obs-search.ns.svc.cluster.local,localhost,127.0.0.1,::1,10.44.0.7,10.96.3.4'.split(
        ',',
      ),
    );
    for (const host of [
      'obs-search:8080',
      'obs-search.ns:8080',
      'obs-search.ns.svc',
      'obs-search.ns.svc.cluster.local:8080',
      'OBS-SEARCH.NS.SVC.CLUSTER.LOCAL.:8080',
      '10.96.3.4:8080',
      '10.44.0.7:8080',
      'localhost:8080',
      '127.0.0.1:8080',
      '[::1]:8080',
    ]) {
      expect(chart(host), host).toBe(true);
    }
    for (const host of [
      'obs-search.other',
      'obs-search.ns.svc.cluster.local.evil.com',
      '10.96.3.5:8080',
      '[::2]:8080',
    ]) {
      expect(chart(host), host).toBe(false);
    }
  });

  it('refuses an empty list when the filter is built', () => {
    expect(() => hostMatcher([' ', ''])).toThrow(/ALLOWED_HOSTS/);
  });

  it('judges the authority of an absolute-form target too, which RFC 9112 puts before the Host header', async () => {
    const app = new Hono();
    app.onError((_err, c) => c.text('refused', 400));
    app.use(allowedHosts(['localhost']));
    app.get('/events', (c) => c.text('page'));
    const status = async (url: string, host: string) =>
      (await app.request(url, { headers: { host } })).status;
    expect(await status('http://evil.example/events', 'localhost')).toBe(400);
    expect(await status('http://localhost/events', 'evil.example')).toBe(400);
    expect(await status('http://localhost:8080/events', 'localhost:8080')).toBe(200);
  });
});
