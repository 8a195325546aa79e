/**
 * Property-based fuzzing of everything a URL can carry, against the real service on a real
 * PostgreSQL: the search page's parameters (known names with hostile, huge, ancient, far-future and
 * malformed values, unknown names), the query bar (lines built from its own grammar, mixed with
 * noise, and with AND, OR, NOT and parentheses in any arrangement) and the export and receipt routes. Whatever comes in: never a 5xx, never a page past its
 * deadline, and the process still answers afterwards (a crash or an unhandled rejection ends the
 * test run). The parsers alone get more cases, with no I/O.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FILTER_PARAMS, parseReceipt, parseSearch } from '../src/filters.js';
import { readQueryBar, writeQueryBar } from '../src/query-bar.js';
import { type Harness, startHarness } from './harness.js';

/** Cases against the service; each is one to three requests. */
const HTTP_RUNS = 500;
/** Cases against the parsers alone. */
const PARSER_RUNS = 2_000;
const PAGE_TIMEOUT_MS = 2_000;
/** Rendering and loopback on a loaded machine, beyond the page's own deadline. */
const SLACK_MS = 1_500;

let h: Harness;

beforeAll(async () => {
  h = await startHarness('fuzz', { seed: 400, pageTimeoutMs: PAGE_TIMEOUT_MS });
});

afterAll(async () => {
  await h?.close();
});

/** Years 0-9999 in the shapes `from`/`to` accept and some they do not. */
const time = fc
  .tuple(
    fc.integer({ min: 0, max: 9999 }),
    fc.integer({ min: 0, max: 13 }),
    fc.integer({ min: 0, max: 32 }),
    fc.constantFrom('', 'T00:00', 'T23:59:59Z', 'T12:00:00.123456789+05:30', 'Z', 'T25:61'),
  )
  .map(
    ([y, m, d, rest]) =>
      `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}${rest}`,
  );
const hostile = fc.constantFrom(
  "'; DROP TABLE events.cloud_event; --",
  '\u0000',
  '%00',
  '\\',
  '"',
  '"unterminated',
  '(((((((((((',
  'a:b:c:d',
  '*',
  '__proto__',
  'constructor',
  '-',
  'or or or',
  '💥',
  '\uD800',
  ' '.repeat(999),
);
const huge = fc
  .integer({ min: 900, max: 1_200 })
  .chain((n) => fc.constantFrom('x'.repeat(n), ' a'.repeat(n / 2)));
const value = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 3, arbitrary: hostile },
  { weight: 3, arbitrary: time },
  { weight: 1, arbitrary: huge },
  {
    weight: 2,
    arbitrary: fc.constantFrom('15m', '24h', 'all', 'error', 'warn', '0', '250', '251', '-1', '1e9'),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom('temperature >= 30', 'a.b.c = "x"', 'n != null', 'x < [1]', 'region=eu'),
  },
);
const NAMES = [...FILTER_PARAMS, 'limit', 'cursor'];
const param = fc.tuple(
  fc.oneof({ weight: 9, arbitrary: fc.constantFrom(...NAMES) }, fc.string({ maxLength: 8 })),
  value,
);
const params = fc.array(param, { maxLength: 8 }).map((pairs) => new URLSearchParams(pairs));

/** Query-bar lines: its own terms with hostile values, and noise. */
const barTerm = fc.oneof(
  fc
    .tuple(
      fc.constantFrom(
        'type:',
        'source:',
        '-source:',
        'subject:',
        'id:',
        'range:',
        'from:',
        'to:',
        'level:',
        '-has:',
        'severity>=',
        'data.x>=',
        'data.a.b=',
        'region=',
        'events/',
      ),
      fc.oneof(value, time),
    )
    .map(([k, v]) => `${k}${v}`),
  fc.string({ maxLength: 12 }),
  hostile,
);
/** The grammar's own tokens: operators in any case, parentheses, a `-` before a group. */
const barOperator = fc.constantFrom('AND', 'OR', 'NOT', 'or', 'Not', '(', ')', '-(', '((', '))');
const barLine = fc.oneof(
  fc.array(barTerm, { maxLength: 10 }).map((terms) => terms.join(' ')),
  fc
    .array(fc.oneof({ weight: 3, arbitrary: barTerm }, { weight: 2, arbitrary: barOperator }), {
      maxLength: 16,
    })
    .chain((parts) => fc.boolean().map((tight) => parts.join(tight ? '' : ' '))),
  fc.string({ maxLength: 2_100 }),
);

interface Outcome {
  status: number;
  ms: number;
}

async function timedGet(path: string): Promise<Outcome> {
  const started = performance.now();
  const res = await h.get(path);
  await res.arrayBuffer();
  return { status: res.status, ms: performance.now() - started };
}

describe('fuzzed requests against the running service', () => {
  it(`never answer 5xx nor run past the page deadline (${HTTP_RUNS} cases)`, async () => {
    let requests = 0;
    let slowest = 0;
    const statuses = new Map<number, number>();
    const check = (path: string, outcome: Outcome) => {
      requests++;
      slowest = Math.max(slowest, outcome.ms);
      statuses.set(outcome.status, (statuses.get(outcome.status) ?? 0) + 1);
      expect(outcome.status, path).toBeLessThan(500);
      expect(outcome.ms, path).toBeLessThan(PAGE_TIMEOUT_MS + SLACK_MS);
    };
    await fc.assert(
      fc.asyncProperty(
        params,
        barLine,
        fc.constantFrom('/events', '/events.ndjson', '/events.csv', '/receipt', '/'),
        async (query, bar, route) => {
          const page = `/events?${query}`;
          check(page, await timedGet(page));
          // The bar answers 303 to the page it stands for; fetch follows it, so that page runs too.
          const barred = `/events?${new URLSearchParams({ bar })}`;
          check(barred, await timedGet(barred));
          if (route !== '/events') {
            const other = `${route}?${query}`;
            check(other, await timedGet(other));
          }
        },
      ),
      { numRuns: HTTP_RUNS },
    );
    expect((await h.get('/health/ready')).status).toBe(200);
    console.info(
      `fuzz: ${HTTP_RUNS} cases, ${requests} requests, statuses ${JSON.stringify(Object.fromEntries(statuses))}, slowest ${slowest.toFixed(0)} ms`,
    );
  });
});

describe('fuzzed parsers', () => {
  it(`read any parameters and any bar line without throwing (${PARSER_RUNS} cases)`, () => {
    fc.assert(
      fc.property(params, barLine, (query, bar) => {
        const parsed = parseSearch(query);
        expect(Array.isArray(parsed.problems)).toBe(true);
        parseReceipt(query);
        const read = readQueryBar(bar);
        if ('params' in read) {
          // What the bar wrote, `parseSearch` reads (a value it refuses is a problem, not a throw).
          expect(Array.isArray(parseSearch(read.params).problems)).toBe(true);
          readQueryBar(writeQueryBar(read.params));
        } else expect(read.column).toBeGreaterThan(0);
      }),
      { numRuns: PARSER_RUNS },
    );
  });
});
