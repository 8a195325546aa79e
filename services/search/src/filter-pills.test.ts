import { describe, expect, it } from 'vitest';
import { activeFilters } from './filter-pills.js';

const pills = (query: string) => activeFilters(new URLSearchParams(query));

describe('activeFilters', () => {
  it('makes a pill of every filter value but the time range, in the URL order', () => {
    const found = pills(
      'range=7d&from=2026-01-01&q=boiler&type=a&type=b&not_source=s&payload=t%3E1&severity=error&ext=region%3Deu&limit=25&cursor=c&more=types',
    );
    expect(found.map((p) => p.label)).toEqual([
      'text: boiler',
      'type: a',
      'type: b',
      'not source: s',
      'payload: t>1',
      'severity at least: error',
      'extension: region=eu',
    ]);
  });

  it('links to the search without the value, and with it switched off, cursor dropped', () => {
    const [first, second] = pills('type=a&type=b&range=1h&cursor=c');
    expect(first).toMatchObject({
      disabled: false,
      remove: '/events?type=b&range=1h',
      toggle: '/events?type=b&range=1h&off_type=a',
    });
    expect(second?.remove).toBe('/events?type=a&range=1h');
    expect(pills('q=x')[0]?.remove).toBe('/events');
  });

  it('shows a switched-off filter with a link that switches it back on', () => {
    const [pill] = pills('off_not_type=noise');
    expect(pill).toMatchObject({
      name: 'not_type',
      label: 'not type: noise',
      disabled: true,
      remove: '/events',
      toggle: '/events?not_type=noise',
    });
  });

  it('leaves out empty values, unknown parameters and switched-off time ranges', () => {
    expect(pills('q=%20&type=&off_range=7d&off_unknown=x&unknown=y')).toEqual([]);
  });
});
