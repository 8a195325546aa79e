import { describe, expect, it } from 'vitest';
import {
  absoluteQuery,
  filterShape,
  MAX_VALUE_LENGTH,
  parsePayloadCondition,
  parseReceipt,
  parseSearch,
  parseTime,
  SHAPES,
  splitCondition,
  widerRange,
  withCursor,
} from './filters.js';

const parse = (query: string) => parseSearch(new URLSearchParams(query));

describe('search filters from the URL', () => {
  it('names 16 distinct shapes in the order time, text, payload, attrs', () => {
    expect(new Set(SHAPES).size).toBe(16);
    expect(SHAPES).toContain('none');
    expect(SHAPES).toContain('time+text+payload+attrs');
    expect(parse('range=all').shape).toBe('none');
    expect(parse('').shape).toBe('time');
    expect(parse('q=boiler&from=2026-11-01&payload=t>3&severity=error').shape).toBe(
      'time+text+payload+attrs',
    );
    expect(parse('type=a&range=all').shape).toBe('attrs');
    expect(parse('ext=region=eu&to=2026-11-02T10:00Z').shape).toBe('time+attrs');
    expect(filterShape({ subject: 's' })).toBe('attrs');
  });

  it('reads every filter kind', () => {
    const { filter, problems, limit } = parse(
      'q=pressure&from=2026-11-01T08:00&to=2026-11-02T08:00Z&payload=device.id = boiler-7&payload=temperature>=30' +
        '&type=a&type=b&source=s&subject=x&ext=Region=eu&severity=warning&limit=100',
    );
    expect(problems).toEqual([]);
    expect(limit).toBe(100);
    expect(filter).toEqual({
      from: new Date('2026-11-01T08:00Z'),
      to: new Date('2026-11-02T08:00Z'),
      text: 'pressure',
      payload: [
        { path: ['device', 'id'], op: '=', value: 'boiler-7' },
        { path: ['temperature'], op: '>=', value: 30 },
      ],
      types: ['a', 'b'],
      sources: ['s'],
      subject: 'x',
      extensions: { region: 'eu' },
      minSeverity: 40,
    });
  });

  it('reads the last 24 hours by default, a relative range, or an absolute one that replaces it', () => {
    const now = new Date('2026-11-26T12:00:00Z');
    const at = (query: string) => parseSearch(new URLSearchParams(query), now);
    expect(at('')).toMatchObject({ range: '24h', filter: { from: new Date('2026-11-25T12:00:00Z') } });
    expect(at('').filter.to).toEqual(now);
    expect(at('range=15m').filter.from).toEqual(new Date('2026-11-26T11:45:00Z'));
    expect(at('range=7d').filter.from).toEqual(new Date('2026-11-19T12:00:00Z'));
    expect(at('range=all')).toMatchObject({ range: 'all', filter: {} });
    expect(at('range=24h&from=2026-11-01')).toMatchObject({
      range: undefined,
      filter: { from: new Date('2026-11-01T00:00Z') },
    });
    expect(at('range=2w').problems).toEqual(['range: expected one of 15m, 1h, 24h, 7d, 30d, all']);
    // The link to share: the same range as absolute times, without the cursor.
    const params = new URLSearchParams('q=x&range=1h&cursor=c');
    expect(absoluteQuery(params, at(params.toString()))).toBe(
      'q=x&from=2026-11-26T11%3A00%3A00.000Z&to=2026-11-26T12%3A00%3A00.000Z',
    );
    expect(absoluteQuery(new URLSearchParams('range=all'), at('range=all'))).toBe(
      'to=2026-11-26T12%3A00%3A00.000Z',
    );
  });

  it('reads payload values as JSON scalars, or as text', () => {
    expect(parsePayloadCondition('ok = true')).toEqual({ path: ['ok'], op: '=', value: true });
    expect(parsePayloadCondition('code != "42"')).toEqual({ path: ['code'], op: '!=', value: '42' });
    expect(parsePayloadCondition('v < -1.5')).toEqual({ path: ['v'], op: '<', value: -1.5 });
    expect(parsePayloadCondition('name = 12abc')).toEqual({ path: ['name'], op: '=', value: '12abc' });
    expect(parsePayloadCondition('a..b = 1')).toMatch(/single dots/);
    expect(parsePayloadCondition('x = {"a":1}')).toEqual({ path: ['x'], op: '=', value: '{"a":1}' });
    expect(parsePayloadCondition('x > null')).toMatch(/null compares/);
    expect(parsePayloadCondition('no operator here')).toMatch(/expected path/);
  });

  it('reports every unusable value, one line each', () => {
    const { problems } = parse('from=yesterday&severity=loud&limit=100000&ext=bad&payload=???');
    expect(problems).toHaveLength(5);
    expect(problems.join('\n')).toMatch(/from:.*\nseverity:.*\nlimit:/s);
  });

  it('refuses severity names that are properties of every object', () => {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      expect(parse(`severity=${name}`).problems, name).toHaveLength(1);
    }
    expect(parse('severity=ERR').filter.minSeverity).toBe(50);
  });

  it('refuses a NUL character in any parameter, raw or as a JSON escape, naming the parameter (PostgreSQL text cannot hold it)', () => {
    for (const name of ['q', 'type', 'source', 'subject', 'cursor']) {
      const parsed = parseSearch(new URLSearchParams({ [name]: 'a\u0000b' }));
      expect(parsed.problems, name).toEqual([`${name}: must not contain the NUL character`]);
      expect(parsed.filter).toEqual({});
    }
    expect(parse('payload=device.id%20%3D%20%22a%5Cu0000%22').problems).toEqual([
      'payload "device.id = "a\\u0000"": text values must not contain the NUL character',
    ]);
  });

  it('refuses times outside the plausible window (1970-01-01 to 7 days after now), naming the edge', () => {
    const now = new Date('2026-11-28T12:00:00Z');
    const at = (query: string) => parseSearch(new URLSearchParams(query), now);
    expect(at('from=0050-01-01').problems).toEqual([
      'from: "0050-01-01" is before 1970-01-01T00:00:00.000Z; times run from 1970-01-01 to 7 days after now',
    ]);
    expect(at('to=9999-12-31').problems[0]).toMatch(/^to: "9999-12-31" is after 2026-12-05T12:00:00.000Z/);
    expect(at('from=1969-12-31T23:59Z').problems).toHaveLength(1);
    expect(at('from=1970-01-01&to=2026-12-05T12:00Z').problems).toEqual([]);
    expect(at('from=0000-01-01&to=0050-01-01').filter).toEqual({});
    expect(parseReceipt(new URLSearchParams('topic=t&partition=0&offset=1&time=0050-01-01'))).toEqual({
      problems: ['time: before 1970-01-01T00:00:00.000Z; times run from 1970-01-01 to 7 days after now'],
    });
  });

  it('refuses any parameter value longer than MAX_VALUE_LENGTH without echoing it', () => {
    const long = 'x'.repeat(MAX_VALUE_LENGTH + 1);
    for (const name of [
      'type',
      'source',
      'subject',
      'id',
      'payload',
      'ext',
      'cursor',
      'from',
      'not_has',
      'range',
    ]) {
      const { problems } = parse(`${name}=${long}`);
      expect(problems).toEqual([`${name}: at most ${MAX_VALUE_LENGTH} characters`]);
    }
    expect(parse(`type=${'x'.repeat(MAX_VALUE_LENGTH)}`).problems).toEqual([]);
    expect(parse(`${'n'.repeat(5_000)}=${long}`).problems[0]!.length).toBeLessThan(100);
  });

  it('splits a payload condition in linear time, whatever spaces it holds', () => {
    expect(splitCondition('  a.b  >=  x  y  ')).toEqual({ path: 'a.b', op: '>=', value: 'x  y' });
    expect(splitCondition('no operator')).toBeUndefined();
    const started = performance.now();
    for (let i = 0; i < 50; i++) {
      splitCondition(`a =${' '.repeat(MAX_VALUE_LENGTH - 4)}b`);
      splitCondition(`${'a'.repeat(MAX_VALUE_LENGTH)}`);
    }
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('refuses a page size above 250 and below 1', () => {
    expect(parse('limit=251').problems).toEqual(['limit: expected a whole number from 1 to 250']);
    expect(parse('limit=0').problems).toHaveLength(1);
    expect(parse('limit=250').limit).toBe(250);
  });

  it('takes times without an offset as UTC', () => {
    expect(parseTime('2026-11-24T08:30')).toEqual(new Date('2026-11-24T08:30:00Z'));
    expect(parseTime('2026-11-24')).toEqual(new Date('2026-11-24T00:00:00Z'));
    expect(parseTime('2026-11-24T08:30+02:00')).toEqual(new Date('2026-11-24T06:30:00Z'));
    expect(parseTime('2026-13-45')).toBeUndefined();
  });

  it('keeps every filter in page links and replaces only the cursor', () => {
    const params = new URLSearchParams('q=a b&type=x&type=y&cursor=old');
    expect(withCursor(params, 'new')).toBe('?q=a+b&type=x&type=y&cursor=new');
    expect(withCursor(params, undefined)).toBe('?q=a+b&type=x&type=y');
  });

  it('reads level=unknown as "no known severity", included or excluded, but not as a minimum', () => {
    expect(parse('level=unknown&level=error&not_level=Unknown').filter).toMatchObject({
      ranks: [null, 50],
      exclude: { ranks: [null] },
    });
    expect(parse('severity=unknown').problems).toEqual([
      'severity: expected one of trace, debug, info, notice, warn, error, critical, alert, emergency',
    ]);
    expect(parse('level=nope').problems[0]).toMatch(/^level: expected one of .*, unknown$/);
  });

  it('reads the facet asked for more values', () => {
    expect(parse('more=subjects').more).toBe('subjects');
    expect(parse('').more).toBeUndefined();
    expect(parse('more=constructor').problems).toEqual([
      'more: expected one of types, sources, subjects, severities, extensions',
    ]);
  });

  it('widens a range to the next larger quick range, an absolute one to all time, all time not at all', () => {
    const wider = (query: string) => {
      const params = new URLSearchParams(query);
      const w = widerRange(params, parseSearch(params));
      return w && [w.label, w.params.toString()];
    };
    expect(wider('q=a&cursor=c')).toEqual(['the last 7 days', 'q=a&range=7d']);
    expect(wider('range=15m&type=x')).toEqual(['the last hour', 'range=1h&type=x']);
    expect(wider('range=30d')).toEqual(['all time', 'range=all']);
    expect(wider('from=2026-01-01&to=2026-01-02&q=a')).toEqual(['all time', 'q=a&range=all']);
    expect(wider('range=all')).toBeUndefined();
  });
});
