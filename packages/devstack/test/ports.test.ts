/**
 * `freePort` claims what it hands out: a port claimed by one process of this machine is not handed
 * to another until the claim is old, so two services starting side by side never get the same one.
 */
import { existsSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { claimPort, freePort, PORT_CLAIMS } from '@event-observatory/devstack';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'port-claims-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('port claims', () => {
  it('are granted once, until the claim is older than five minutes', () => {
    expect(claimPort(24_001, dir)).toBe(true);
    expect(claimPort(24_001, dir)).toBe(false);
    expect(claimPort(24_002, dir)).toBe(true);

    const fourMinutesAgo = new Date(Date.now() - 4 * 60_000);
    utimesSync(join(dir, '24001'), fourMinutesAgo, fourMinutesAgo);
    expect(claimPort(24_001, dir)).toBe(false);
    const sixMinutesAgo = new Date(Date.now() - 6 * 60_000);
    utimesSync(join(dir, '24001'), sixMinutesAgo, sixMinutesAgo);
    expect(claimPort(24_001, dir)).toBe(true);
    expect(claimPort(24_001, dir)).toBe(false);
  });

  it('are taken over by one process at a time: not while another holds the takeover guard', () => {
    expect(claimPort(24_003, dir)).toBe(true);
    const sixMinutesAgo = new Date(Date.now() - 6 * 60_000);
    utimesSync(join(dir, '24003'), sixMinutesAgo, sixMinutesAgo);
    writeFileSync(join(dir, '24003.takeover'), '');
    expect(claimPort(24_003, dir)).toBe(false);
    rmSync(join(dir, '24003.takeover'));
    expect(claimPort(24_003, dir)).toBe(true);
    expect(existsSync(join(dir, '24003.takeover'))).toBe(false);
    expect(claimPort(24_003, dir)).toBe(false);
  });

  it('are taken by freePort for every port it hands out, never the same one twice', async () => {
    const ports = await Promise.all(Array.from({ length: 50 }, () => freePort()));
    expect(new Set(ports).size).toBe(50);
    for (const port of ports) {
      expect(existsSync(join(PORT_CLAIMS, String(port)))).toBe(true);
      expect(claimPort(port)).toBe(false);
    }
  });
});
