import type { Queryable } from '@event-observatory/store';
import { describe, expect, it } from 'vitest';
import { facetSuggestions, suggest } from './suggestions.js';

/** A catalog answering every name lookup with `names`, recording the prefixes asked. */
function catalog(names: string[]) {
  const asked: unknown[][] = [];
  const db = {
    query: async (_sql: string, values: unknown[]) => {
      asked.push(values);
      return { rows: names.map((name) => ({ name })) };
    },
  } as unknown as Queryable;
  return { db, asked };
}

describe('query-bar suggestions', () => {
  it('completes a bare word to field names, keeping the line before it', async () => {
    const { db, asked } = catalog([]);
    expect(await suggest(db, 'ty')).toEqual(['type:']);
    expect(await suggest(db, 'type:a OR -s')).toEqual([
      'type:a OR -source:',
      'type:a OR -subject:',
      'type:a OR -severity>=',
    ]);
    expect(await suggest(db, 'boiler ')).toEqual([]);
    expect(asked).toEqual([]);
  });

  it('completes severities and ranges from their fixed lists', async () => {
    const { db } = catalog([]);
    expect(await suggest(db, 'severity>=er')).toEqual(['severity>=error']);
    expect(await suggest(db, 'x level:wa')).toEqual(['x level:warn']);
    expect(await suggest(db, 'range:3')).toEqual(['range:30d']);
  });

  it('completes types and sources from the catalog, quoting a name with a space', async () => {
    const { db, asked } = catalog(['com.acme.order', 'com.acme.two words']);
    expect(await suggest(db, 'boiler type:com.ac')).toEqual([
      'boiler type:com.acme.order',
      'boiler type:"com.acme.two words"',
    ]);
    expect(asked).toEqual([['com.ac', 20]]);
  });

  it('renders the facets as the line narrowed by each name, leaving out names it has', () => {
    expect(
      facetSuggestions('type:a', {
        types: [{ value: 'a' }, { value: 'b c' }],
        sources: [{ value: 'urn:s' }],
      }),
    ).toEqual(['type:a type:"b c"', 'type:a source:urn:s']);
  });
});
