import { describe, expect, it } from 'vitest';
import { parseSearch } from './filters.js';
import { refreshSeconds, timeSteps } from './time-toolbar.js';

const NOW = new Date('2026-11-29T12:00:00Z');
const H = 3_600_000;

function steps(query: string) {
  const params = new URLSearchParams(query);
  return timeSteps(params, parseSearch(params, NOW));
}

const times = (p: URLSearchParams | undefined) => p && [p.get('from'), p.get('to')];

describe('time steps', () => {
  it('moves a relative range earlier by its width, zooms out to twice it ending now, and has no later', () => {
    const s = steps('range=24h&type=a&sort=oldest&col=type&cursor=x')!;
    expect(times(s.earlier)).toEqual(['2026-11-27T12:00:00.000Z', '2026-11-28T12:00:00.000Z']);
    expect(s.later).toBeUndefined();
    expect(times(s.zoomOut)).toEqual(['2026-11-27T12:00:00.000Z', '2026-11-29T12:00:00.000Z']);
    // Every other parameter kept, the range replaced, the page position dropped.
    expect([...s.earlier!.keys()]).toEqual(['type', 'sort', 'col', 'from', 'to']);
  });

  it('moves an absolute range later, never past now, and zooms out around its middle', () => {
    const s = steps('from=2026-11-29T08:00Z&to=2026-11-29T10:00Z')!;
    expect(times(s.zoomOut)).toEqual(['2026-11-29T07:00:00.000Z', '2026-11-29T11:00:00.000Z']);
    expect(times(s.later)).toEqual(['2026-11-29T10:00:00.000Z', '2026-11-29T12:00:00.000Z']);
    const near = steps('from=2026-11-29T10:00Z&to=2026-11-29T11:00Z')!;
    expect(times(near.later)).toEqual(['2026-11-29T11:00:00.000Z', '2026-11-29T12:00:00.000Z']);
    expect(new Date(near.zoomOut.get('to')!).getTime() - new Date(near.zoomOut.get('from')!).getTime()).toBe(
      2 * H,
    );
  });

  it('stays inside 1970 and offers nothing for all time or a range open at the start', () => {
    const s = steps('from=1970-01-01T00:00Z&to=1970-01-01T01:00Z')!;
    expect(s.earlier).toBeUndefined();
    expect(times(s.zoomOut)).toEqual(['1970-01-01T00:00:00.000Z', '1970-01-01T02:00:00.000Z']);
    expect(steps('range=all')).toBeUndefined();
    expect(steps('to=2026-11-29T10:00Z')).toBeUndefined();
  });
});

describe('auto-refresh', () => {
  const seconds = (query: string) => refreshSeconds(parseSearch(new URLSearchParams(query), NOW));

  it('reloads a range that ends now or later, never one that ended', () => {
    expect(seconds('range=1h&refresh=30s')).toBe(30);
    expect(seconds('range=all&refresh=5m')).toBe(300);
    expect(seconds('from=2026-11-29T08:00Z&refresh=10s')).toBe(10);
    expect(seconds('from=2026-11-29T08:00Z&to=2026-11-29T13:00Z&refresh=1m')).toBe(60);
    expect(seconds('from=2026-11-29T08:00Z&to=2026-11-29T10:00Z&refresh=1m')).toBe(0);
    expect(seconds('range=1h')).toBe(0);
    expect(seconds('range=1h&refresh=off')).toBe(0);
  });

  it('refuses a period it does not offer', () => {
    expect(parseSearch(new URLSearchParams('refresh=2s'), NOW).problems).toEqual([
      'refresh: expected one of off, 10s, 30s, 1m, 5m',
    ]);
  });
});
