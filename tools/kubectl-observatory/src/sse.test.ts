import { describe, expect, it } from 'vitest';
import { parseArgs } from './args.js';
import { SseParser } from './sse.js';

describe('SSE parser', () => {
  it('keeps the retry the server asked for', () => {
    const parser = new SseParser();
    expect(parser.retryMs).toBeUndefined();
    parser.push('retry: 1000\n\n');
    expect(parser.retryMs).toBe(1000);
  });

  it('joins events split across chunks and skips comments and events without data', () => {
    const parser = new SseParser();
    expect(parser.push(': keep-alive\n\nevent: event\nid: c1\nda')).toEqual([]);
    expect(parser.push('ta: {"a":1}\r\n\r\nretry: 5\n\nevent: event\ndata: x\ndata: y\n\n')).toEqual([
      { event: 'event', id: 'c1', data: '{"a":1}' },
      { event: 'event', data: 'x\ny' },
    ]);
  });
});

describe('arguments', () => {
  const known = new Set(['namespace', 'limit', 'dry-run', 'all-namespaces']);
  it('commands, -n, -A, --flag value, --flag=value and switches', () => {
    const args = parseArgs(['dlq', 'replay', '--dry-run', '--limit=5', '-n', 'x', '-A'], known);
    expect(args.command).toEqual(['dlq', 'replay']);
    expect(Object.fromEntries(args.flags)).toEqual({
      'dry-run': 'true',
      limit: '5',
      namespace: 'x',
      'all-namespaces': 'true',
    });
  });
  it('refuses an unknown flag or a missing value, naming it', () => {
    expect(() => parseArgs(['--bogus'], known)).toThrow('unknown flag --bogus');
    expect(() => parseArgs(['--limit'], known)).toThrow('--limit needs a value');
    expect(() => parseArgs(['-o', 'json'], known)).toThrow('unknown flag -o');
    expect(() => parseArgs(['-n'], known)).toThrow('-n needs a namespace');
    expect(() => parseArgs(['-n', '-A'], known)).toThrow('-n needs a namespace');
  });
  it("takes kubectl's -nNS and -n=NS", () => {
    expect(parseArgs(['-nprod'], known).flags.get('namespace')).toBe('prod');
    expect(parseArgs(['-n=prod'], known).flags.get('namespace')).toBe('prod');
  });
  it('reads a switch set to false as absent, and refuses any other value', () => {
    expect(parseArgs(['--dry-run=false'], known).flags.has('dry-run')).toBe(false);
    expect(parseArgs(['--dry-run=true'], known).flags.get('dry-run')).toBe('true');
    expect(() => parseArgs(['--dry-run=yes'], known)).toThrow('--dry-run takes no value, or =true or =false');
  });
});
