import { describe, expect, it } from 'vitest';
import { parseSearch } from './filters.js';
import { MAX_BAR_LENGTH, mergeQueryBar, readQueryBar, writeQueryBar } from './query-bar.js';
import { MAX_DEPTH, MAX_TERMS } from './query-language.js';

const read = (line: string) => {
  const r = readQueryBar(line);
  if ('error' in r) throw new Error(`${r.column}: ${r.error}`);
  return r.params;
};

describe('query bar', () => {
  it('reads the example line into the same parameters the form writes', () => {
    const params = read(
      'type:com.acme.order.* source:/orders/eu severity>=error data.amount>100 region=eu "exact phrase" -excluded',
    );
    expect([...params]).toEqual([
      ['type', 'com.acme.order.*'],
      ['source', '/orders/eu'],
      ['severity', 'error'],
      ['payload', 'amount > 100'],
      ['ext', 'region=eu'],
      ['q', '"exact phrase" -excluded'],
    ]);
    const { filter, problems } = parseSearch(params);
    expect(problems).toEqual([]);
    expect(filter).toMatchObject({
      types: ['com.acme.order.*'],
      sources: ['/orders/eu'],
      minSeverity: 50,
      payload: [{ path: ['amount'], op: '>', value: 100 }],
      extensions: { region: 'eu' },
      text: '"exact phrase" -excluded',
    });
  });

  it('reads exclusions, exact levels and extension names', () => {
    expect([...read('-type:a -subject:"b c" level:warn has:region -has:trace')]).toEqual([
      ['not_type', 'a'],
      ['not_subject', 'b c'],
      ['level', 'warn'],
      ['has', 'region'],
      ['not_has', 'trace'],
    ]);
    // The form has no `not_id`: a negated id is a query.
    expect([...read('-id:7')]).toEqual([['query', '-id:7']]);
  });

  it('reads the events/{source},{id} name ingest answers as source and id over all time', () => {
    expect([...read('events/urn%3Aseed%3Asource-7,seed-7')]).toEqual([
      ['source', 'urn:seed:source-7'],
      ['id', 'seed-7'],
      ['range', 'all'],
    ]);
    expect(readQueryBar('x events/a,b,c')).toMatchObject({
      column: 3,
      error: expect.stringMatching(/events\/\{source\}/),
    });
  });

  it('points at the column of a syntax error', () => {
    expect(readQueryBar('type:a "never closed')).toEqual({ error: 'this quote is never closed', column: 8 });
    expect(readQueryBar('boiler colour:red')).toMatchObject({
      column: 8,
      error: expect.stringMatching(/unknown field "colour"/),
    });
    expect(readQueryBar('x region>eu')).toMatchObject({ column: 9, error: expect.stringMatching(/= only/) });
    expect(readQueryBar('data.t>=')).toMatchObject({
      column: 9,
      error: expect.stringMatching(/value must follow/),
    });
    expect(readQueryBar('type:')).toMatchObject({ column: 6 });
  });

  it('writes the parameters back as a line that reads into the same parameters', () => {
    const params = new URLSearchParams(
      'q=boiler -test&type=a b&source=s&subject=x&severity=warn&payload=device.id = "boiler 7"&payload=t>=3&ext=Region=eu',
    );
    const line = writeQueryBar(params);
    expect(line).toBe(
      'type:"a b" source:s subject:x severity>=warn data.device.id="boiler 7" data.t>=3 region=eu boiler -test',
    );
    const again = read(line);
    const now = new Date();
    expect(parseSearch(again, now).filter).toEqual(parseSearch(params, now).filter);
    // An id is a lookup: read back, it searches all time.
    expect(writeQueryBar(new URLSearchParams('id=42&range=7d'))).toBe('id:42');
    expect([...read('id:42')]).toEqual([
      ['id', '42'],
      ['range', 'all'],
    ]);
    const query = new URLSearchParams({ type: 'x', query: 'type:a OR failed' });
    expect(writeQueryBar(query)).toBe('type:x (type:a OR failed)');
    expect(read(writeQueryBar(query)).get('query')).toBe('type:x (type:a OR failed)');
  });

  it('keeps the time range and page size unless the line names them', () => {
    const current = new URLSearchParams('range=7d&limit=25&q=old&type=old&cursor=c');
    expect(mergeQueryBar(current, read('boiler')).toString()).toBe('range=7d&limit=25&q=boiler');
    expect(mergeQueryBar(current, read('from:2026-11-01 x')).toString()).toBe('limit=25&from=2026-11-01&q=x');
  });

  it('refuses a line longer than MAX_BAR_LENGTH, pointing past its end', () => {
    expect(readQueryBar('a'.repeat(MAX_BAR_LENGTH))).toHaveProperty('params');
    expect(readQueryBar('a'.repeat(MAX_BAR_LENGTH + 1))).toEqual({
      error: `the line is longer than ${MAX_BAR_LENGTH} characters`,
      column: MAX_BAR_LENGTH + 1,
    });
  });

  it('reads and writes lines built to make a backtracking parser slow in linear time', () => {
    const lines = [
      `data.x=${' '.repeat(1_900)}y`,
      `events/${'a,'.repeat(990)}`,
      `${'events/a,b '.repeat(180)}`,
      `-${'a'.repeat(1_998)}`,
      `"${'\\'.repeat(995)}`,
    ];
    const started = performance.now();
    for (const line of lines) {
      const r = readQueryBar(line);
      if ('params' in r) writeQueryBar(r.params);
    }
    writeQueryBar(new URLSearchParams({ payload: `x =${' '.repeat(999)}` }));
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe('query bar: AND, OR, NOT and parentheses', () => {
  it('keeps a plain conjunction in the form parameters, whatever says AND', () => {
    expect([...read('type:a AND boiler NOT test NOT type:b')]).toEqual([
      ['type', 'a'],
      ['not_type', 'b'],
      ['q', 'boiler -test'],
    ]);
  });

  it('writes anything else as one query line, time terms taken out', () => {
    expect([...read('type:A OR type:B')]).toEqual([['query', 'type:A OR type:B']]);
    expect([...read('range:7d (type:a or source:s) -severity>=error')]).toEqual([
      ['range', '7d'],
      ['query', '(type:a OR source:s) -severity>=error'],
    ]);
    expect([...read('NOT (a OR b)')]).toEqual([['query', 'NOT (a OR b)']]);
    expect([...read('-(a b)')]).toEqual([['query', 'NOT (a b)']]);
    // Quoted, an operator is a word again.
    expect([...read('"or" cats')]).toEqual([['q', '"or" cats']]);
  });

  it('means what the line says: OR looser than AND, NOT tightest', () => {
    const now = new Date('2026-11-24T08:00Z');
    const where = (line: string) => parseSearch(read(line), now).filter.where;
    expect(where('type:a OR type:b source:s')).toEqual({
      any: [
        { match: { types: ['a'] } },
        { all: [{ match: { types: ['b'] } }, { match: { sources: ['s'] } }] },
      ],
    });
    expect(where('(type:a OR type:b) NOT failed')).toEqual({
      all: [
        { any: [{ match: { types: ['a'] } }, { match: { types: ['b'] } }] },
        { not: { match: { text: 'failed' } } },
      ],
    });
    expect(where('NOT NOT data.n>=3 OR -has:trace')).toEqual({
      any: [
        { not: { not: { match: { payload: [{ path: ['n'], op: '>=', value: 3 }] } } } },
        { not: { match: { hasExtensions: ['trace'] } } },
      ],
    });
  });

  it('points at the column of a grammar mistake', () => {
    expect(readQueryBar('type:a OR')).toEqual({ error: 'OR needs a term after it', column: 8 });
    expect(readQueryBar('OR type:a')).toEqual({ error: 'OR needs a term before it', column: 1 });
    expect(readQueryBar('a AND')).toEqual({ error: 'AND needs a term after it', column: 3 });
    expect(readQueryBar('(a OR b')).toEqual({ error: 'this parenthesis is never closed', column: 1 });
    expect(readQueryBar('a) b')).toEqual({ error: 'this parenthesis closes nothing', column: 2 });
    expect(readQueryBar('a ()')).toEqual({ error: 'nothing between these parentheses', column: 3 });
    expect(readQueryBar('NOT')).toEqual({ error: 'NOT needs a term after it', column: 1 });
    expect(readQueryBar('a OR (range:7d b)')).toMatchObject({
      column: 7,
      error: expect.stringMatching(/whole line/),
    });
    expect(readQueryBar('-range:7d')).toMatchObject({
      column: 1,
      error: expect.stringMatching(/cannot be negated/),
    });
    expect(readQueryBar(`${'('.repeat(MAX_DEPTH + 1)}a${')'.repeat(MAX_DEPTH + 1)}`)).toEqual({
      error: `at most ${MAX_DEPTH} levels of NOT and parentheses`,
      column: MAX_DEPTH + 1,
    });
    expect(readQueryBar('x '.repeat(MAX_TERMS + 1))).toEqual({
      error: `at most ${MAX_TERMS} terms`,
      column: 2 * MAX_TERMS + 1,
    });
  });

  it('refuses an order comparison with a value that is no number, date, boolean or quoted text', () => {
    expect(readQueryBar('type:a data.amount>abc')).toEqual({
      error: expect.stringMatching(/^data\.amount>abc: > compares numbers/),
      column: 20,
    });
    for (const ok of ['data.amount>-1.5e3', 'data.at>=2026-11-24T08:00Z', 'data.name<"m"', 'data.on>false'])
      expect(readQueryBar(ok)).toHaveProperty('params');
    expect(parseSearch(new URLSearchParams({ payload: 'amount > abc' })).problems).toEqual([
      expect.stringMatching(/quote "abc" to compare text/),
    ]);
  });

  it('looks up a pasted id or event name over all time, unless the line names a time', () => {
    expect([...read('seed-7')]).toEqual([
      ['query', 'id:seed-7 OR seed-7'],
      ['range', 'all'],
    ]);
    expect([...read('0b1c6f1e-8f0e-4c8e-9a55-1f2b3c4d5e6f')][1]).toEqual(['range', 'all']);
    expect([...read('boiler')]).toEqual([['q', 'boiler']]);
    expect([...read('range:1h id:x')]).toEqual([
      ['range', '1h'],
      ['id', 'x'],
    ]);
    // Inside an OR the id does not bound every match: the range stays.
    expect([...read('id:x OR type:a')]).toEqual([['query', 'id:x OR type:a']]);
  });

  it('reads deep and long lines in linear time', () => {
    const lines = [
      `${'('.repeat(MAX_DEPTH)}a${')'.repeat(MAX_DEPTH)}`,
      `${'NOT '.repeat(500)}a`,
      `${'('.repeat(1_000)}`,
      `${'a OR '.repeat(63)}a`,
      ')'.repeat(2_000),
    ];
    const started = performance.now();
    for (const line of lines) readQueryBar(line);
    expect(performance.now() - started).toBeLessThan(200);
  });
});
