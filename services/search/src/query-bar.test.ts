import { describe, expect, it } from 'vitest';
import { parseSearch } from './filters.js';
import { MAX_BAR_LENGTH, mergeQueryBar, readQueryBar, writeQueryBar } from './query-bar.js';

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
    expect(readQueryBar('-id:7')).toMatchObject({
      column: 1,
      error: expect.stringMatching(/can be excluded/),
    });
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
      'q=boiler -test&type=a b&source=s&subject=x&id=42&severity=warn&payload=device.id = "boiler 7"&payload=t>=3&ext=Region=eu',
    );
    const line = writeQueryBar(params);
    expect(line).toBe(
      'type:"a b" source:s subject:x id:42 severity>=warn data.device.id="boiler 7" data.t>=3 region=eu boiler -test',
    );
    const again = read(line);
    const now = new Date();
    expect(parseSearch(again, now).filter).toEqual(parseSearch(params, now).filter);
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
