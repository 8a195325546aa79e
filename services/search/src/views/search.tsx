/** @jsxRuntime automatic @jsxImportSource hono/jsx */
/** `GET /events`: the filter form (every filter a query parameter), results, page links, facets, tail. */
import {
  type CellRow,
  FACET_MORE_VALUES,
  FACET_NAMES,
  type FacetName,
  type Facets,
  type FacetValue,
  SEVERITY,
  severityName,
} from '@event-observatory/store';
import { EXPORT_CAP } from '../export.js';
import { exportHrefs } from '../export-links.js';
import type { Failure } from '../failures.js';
import { disabledFilters } from '../filter-pills.js';
import {
  absoluteQuery,
  MAX_LIMIT,
  type ParsedSearch,
  RANGES,
  searchFilters,
  TABLE_PARAMS,
  UNKNOWN_LEVEL,
  widerRange,
  withCursor,
} from '../filters.js';
import { writeQueryBar } from '../query-bar.js';
import type { SearchView } from '../search.js';
import { facetSuggestions } from '../suggestions.js';
import { FilterPills } from './filter-pills.js';
import { HistogramPanel } from './histogram.js';
import { HiddenFields, Layout, number, Problems, utc } from './layout.js';
import { EventTable } from './results-table.js';
import { SaveSearchForm } from './save-search.js';
import { TableSettings } from './table-settings.js';
import { RefreshFallback, TimeToolbar } from './time-toolbar.js';

export interface SearchPageProps {
  params: URLSearchParams;
  /** The search as understood (absent when the URL could not be parsed). */
  parsed?: ParsedSearch;
  problems: string[];
  /** A query-bar line that could not be read, and where. */
  barError?: { error: string; column: number };
  view?: SearchView;
  failure?: Failure;
}

/** Link to the search page with these filters. */
export function searchHref(search: URLSearchParams): string {
  return search.size ? `/events?${search}` : '/events';
}

function TextField(props: {
  name: string;
  label: string;
  value: string | undefined;
  hint?: string;
  id?: string;
  wide?: boolean;
}) {
  const id = props.id ?? `f-${props.name}`;
  return (
    <div class={props.wide ? 'wide' : undefined}>
      <label for={id}>{props.label}</label>
      <input
        id={id}
        name={props.name}
        type="text"
        value={props.value ?? ''}
        aria-describedby={props.hint ? `${id}-hint` : undefined}
      />
      {props.hint ? (
        <span id={`${id}-hint`} class="hint">
          {props.hint}
        </span>
      ) : null}
    </div>
  );
}

/** Every given value of a repeatable parameter, plus one empty field to add another. */
function Repeated(props: { name: string; label: string; values: string[]; hint: string }) {
  return (
    <>
      {[...props.values, ''].map((value, i) => (
        <TextField
          name={props.name}
          id={`f-${props.name}-${i}`}
          label={i === 0 ? props.label : `${props.label} (${i + 1})`}
          value={value}
          hint={props.hint}
        />
      ))}
    </>
  );
}

/** An absolute range as the time picker shows it (UTC, to the minute). */
function absoluteLabel(parsed: ParsedSearch | undefined): string {
  const minute = (d: Date) => utc(d, false).slice(0, 16);
  const { from, to } = parsed?.filter ?? {};
  if (from && to) return `${minute(from)} to ${minute(to)} UTC`;
  if (from) return `From ${minute(from)} UTC`;
  if (to) return `Before ${minute(to)} UTC`;
  return 'From/To of the calendar';
}

/**
 * The time picker beside the query bar (the first screen shows the range searched): relative ranges
 * ending now; From/To of the filter form, when given, replace it.
 */
function RangeSelect(props: { parsed: ParsedSearch | undefined }) {
  const current = props.parsed?.range;
  return (
    <select id="f-range" name="range" aria-label="Time range">
      {current === undefined ? (
        <option value="" selected>
          {absoluteLabel(props.parsed)}
        </option>
      ) : null}
      {Object.entries(RANGES).map(([value, r]) => (
        <option value={value} selected={value === current}>
          {r.label}
        </option>
      ))}
    </select>
  );
}

/** The switched-off filters, as hidden fields: a form that searches again keeps them off. */
function DisabledFilters(props: { params: URLSearchParams }) {
  return (
    <>
      {disabledFilters(props.params).map(([name, value]) => (
        <input type="hidden" name={name} value={value} />
      ))}
    </>
  );
}

/** One line for every filter; the server reads it into the form's parameters (same URL). */
function QueryBar(props: {
  params: URLSearchParams;
  parsed: ParsedSearch | undefined;
  error: SearchPageProps['barError'];
  /** The bar's autocomplete as rendered (`facetSuggestions`); `/assets/suggest.js` replaces it while typing. */
  suggestions: string[];
}) {
  const p = props.params;
  const line = props.error ? (p.get('bar') ?? '') : writeQueryBar(p);
  return (
    <form method="get" action="/events" class="bar" aria-label="Query bar">
      <DisabledFilters params={p} />
      {/* Hidden from sight, not from assistive technology: the bar's place says what it is. */}
      <label for="f-bar" class="visually-hidden">
        Query
      </label>
      <div class="bar-row">
        <input
          id="f-bar"
          name="bar"
          type="text"
          value={line}
          aria-describedby={props.error ? 'f-bar-error f-bar-hint' : 'f-bar-hint'}
          aria-invalid={props.error ? 'true' : undefined}
          spellcheck={false}
          autocomplete="off"
          list="bar-suggestions"
        />
        <datalist id="bar-suggestions">
          {props.suggestions.map((value) => (
            <option value={value} />
          ))}
        </datalist>
        <RangeSelect parsed={props.parsed} />
        <button type="submit">Run</button>
        {/* Folded so the bar takes one line; the field's description still reads it out. */}
        <details class="syntax">
          <summary>Syntax</summary>
          <p id="f-bar-hint" class="hint">
            e.g. type:com.acme.order.* source:/orders/eu severity&gt;=error data.amount&gt;100 region=eu
            "exact phrase" -excluded, or (type:a OR type:b) NOT failed. Keys: / focuses this bar, j and k move
            through the results, Enter opens one.
          </p>
        </details>
      </div>
      <HiddenFields params={p} names={['from', 'to', 'limit', ...TABLE_PARAMS]} />
      {props.error ? (
        <div id="f-bar-error" class="problems" role="alert">
          <p>
            Column {props.error.column}: {props.error.error}
          </p>
          <pre class="caret" aria-hidden="true">
            {line}
            {'\n'}
            {`${' '.repeat(props.error.column - 1)}^`}
          </pre>
        </div>
      ) : null}
    </form>
  );
}

function FilterForm(props: { params: URLSearchParams }) {
  const p = props.params;
  const get = (n: string) => p.get(n) ?? undefined;
  const severity = (p.get('severity') ?? '').toLowerCase();
  const limit = p.get('limit') ?? '50';
  return (
    <form method="get" action="/events" class="filters" aria-label="Event filters">
      <DisabledFilters params={p} />
      <HiddenFields params={p} names={['range']} />
      <TextField
        name="q"
        label="Text"
        value={get('q')}
        hint='Words in type, source, subject, tags or payload text; "exact phrase", or, -exclude'
        wide
      />
      <TextField
        name="from"
        label="From (UTC)"
        value={get('from')}
        hint="e.g. 2026-11-24T08:00; From or To replace the time range"
      />
      <TextField name="to" label="To (UTC)" value={get('to')} hint="exclusive" />
      <TextField name="type" label="Type" value={get('type')} hint="exact, e.g. com.example.alarm" />
      <TextField name="source" label="Source" value={get('source')} hint="exact" />
      <TextField name="subject" label="Subject" value={get('subject')} hint="exact" />
      <div>
        <label for="f-severity">Minimum severity</label>
        <select id="f-severity" name="severity">
          <option value="">Any</option>
          {Object.keys(SEVERITY).map((name) => (
            <option value={name} selected={name === severity}>
              {name}
            </option>
          ))}
        </select>
      </div>
      <Repeated
        name="payload"
        label="Payload condition"
        values={p.getAll('payload').filter((v) => v.trim() !== '')}
        hint="path op value, e.g. temperature >= 30 or device.id = boiler-7"
      />
      <Repeated
        name="ext"
        label="Extension"
        values={p.getAll('ext').filter((v) => v.trim() !== '')}
        hint="name=value, e.g. region=eu"
      />
      <div>
        <label for="f-limit">Rows per page</label>
        <select id="f-limit" name="limit">
          {['25', '50', '100', String(MAX_LIMIT)].map((n) => (
            <option value={n} selected={n === limit}>
              {n}
            </option>
          ))}
        </select>
      </div>
      <HiddenFields params={p} names={['query', ...TABLE_PARAMS]} />
      <div class="wide">
        <button type="submit">Search</button> <a href="/events">Clear filters</a>
      </div>
    </form>
  );
}

/** The exports of this search, in the table's order (and, for CSV, its chosen columns). */
function ExportLinks(props: { params: URLSearchParams; parsed: ParsedSearch | undefined }) {
  const href = exportHrefs(props.params, props.parsed?.columns ?? []);
  const order = props.parsed?.sort === 'oldest' ? 'oldest first' : 'newest first';
  return (
    <p class="hint">
      Export ({order}, at most {number.format(EXPORT_CAP)} events): <a href={href.ndjson}>NDJSON</a> (whole
      events) · <a href={href.csv}>CSV</a>
      {props.params.has('col') ? " (the table's columns)" : null}
    </p>
  );
}

function Total(props: { total: SearchView['total'] }) {
  const t = props.total;
  if ('message' in t)
    return <p role="status">Matching events: count unavailable ({t.title.toLowerCase()}).</p>;
  return (
    <p role="status">
      Matching events:{' '}
      <strong>
        {t.capped
          ? `${number.format(t.total)}+`
          : t.estimated
            ? `about ${number.format(t.total)}`
            : number.format(t.total)}
      </strong>
      {t.estimated && !t.capped ? ' (estimated from a sample of the range)' : null}
    </p>
  );
}

/** The order and time zone of the rows, with the link to the other order. */
function RowsNote(props: { params: URLSearchParams; parsed: ParsedSearch | undefined }) {
  const sort = props.parsed?.sort ?? 'newest';
  const other = sort === 'newest' ? 'oldest' : 'newest';
  return (
    <p class="hint">
      {sort === 'newest' ? 'Newest first' : 'Oldest first'} (
      <a href={withValue(props.params, 'sort', other, true)}>show {other} first</a>);{' '}
      {props.parsed?.timeZone === 'browser'
        ? "times in your browser's time zone (UTC without JavaScript)"
        : 'times in UTC'}
      .
    </p>
  );
}

/** The page's rows in the chosen columns, each with its expand row. */
function Results(props: { rows: CellRow[]; params: URLSearchParams; parsed: ParsedSearch | undefined }) {
  if (props.rows.length === 0) return <p>No events match these filters.</p>;
  return (
    <EventTable
      rows={props.rows}
      caption="Matching events"
      captionHidden
      search={searchFilters(props.params)}
      {...(props.parsed ? { columns: props.parsed.columns, timeZone: props.parsed.timeZone } : {})}
    />
  );
}

/** The URL with `name=value` added (`set` replaces the parameter's values), cursor dropped. */
function withValue(params: URLSearchParams, name: string, value: string, set = false): string {
  const next = new URLSearchParams(params);
  next.delete('cursor');
  if (set) next.set(name, value);
  else if (!next.has(name, value)) next.append(name, value);
  return `/events?${next}`;
}

/** The URL without `name`, cursor dropped. */
function without(params: URLSearchParams, name: string): string {
  const next = new URLSearchParams(params);
  next.delete('cursor');
  next.delete(name);
  return searchHref(next);
}

/**
 * How one facet's values become filters: `param` for "only" and `not_<param>` for "not". `set`:
 * "only" replaces the parameter's values rather than adding one; a listed value is one of the
 * matches, so it already meets them and replacing them is the same as adding the condition (an
 * "only" added beside `type=a.*` would widen the search to "a.* or the value"). `unusable` says why
 * a value cannot be written as that parameter, so it gets no links rather than a wrong search.
 */
interface FacetFilter {
  param: string;
  set: boolean;
  /** How a value is shown (severity ranks as names). */
  label?: (value: string) => string;
  /** How a value goes into the URL. */
  urlValue?: (value: string) => string;
  unusable?: (value: string) => string | undefined;
}

const levelName = (rank: string) => (rank === '' ? UNKNOWN_LEVEL : (severityName(Number(rank)) ?? rank));

const FACET_FILTERS: Record<FacetName, FacetFilter & { title: string }> = {
  types: {
    title: 'Types',
    param: 'type',
    set: true,
    unusable: (v) => (v.endsWith('*') ? 'ends in *, which a type filter reads as a prefix' : undefined),
  },
  sources: { title: 'Sources', param: 'source', set: true },
  subjects: { title: 'Subjects', param: 'subject', set: true },
  severities: { title: 'Severities', param: 'level', set: true, label: levelName, urlValue: levelName },
  extensions: {
    title: 'Extensions',
    param: 'has',
    set: false,
    unusable: (v) => (/^[a-z0-9]{1,20}$/.test(v) ? undefined : 'not an extension name of a-z and 0-9'),
  },
};

const percent = new Intl.NumberFormat('en-US', { style: 'percent', maximumFractionDigits: 0 });

/** A share as text ("<1%" rather than a rounded "0%" for a value that is there). */
export function shareText(count: number, of: number): string {
  const share = of > 0 ? count / of : 0;
  return share > 0 && share < 0.005 ? '<1%' : percent.format(share);
}

/** The share as a bar; decoration beside the percentage in words (drawn with attributes: no inline style). */
function ShareBar(props: { count: number; of: number }) {
  const width = props.of > 0 ? Math.min(100, (props.count / props.of) * 100) : 0;
  return (
    <svg class="share" viewBox="0 0 100 8" preserveAspectRatio="none" aria-hidden="true" focusable="false">
      <rect class="share-bg" width="100" height="8" />
      <rect class="share-fill" width={width.toFixed(1)} height="8" />
    </svg>
  );
}

function FacetList(props: {
  name: FacetName;
  params: URLSearchParams;
  values: FacetValue[];
  /** Matches the counts are of (a share's whole). */
  counted: number;
  hidden: number;
  expanded: boolean;
}) {
  const spec = FACET_FILTERS[props.name];
  if (props.values.length === 0) return null;
  const noun = spec.title.toLowerCase();
  return (
    <>
      <h3>{spec.title}</h3>
      <ul class="facets">
        {props.values.map((f) => {
          const shown = spec.label ? spec.label(f.value) : f.value;
          const value = spec.urlValue ? spec.urlValue(f.value) : f.value;
          const unusable = spec.unusable?.(f.value);
          const share = shareText(f.count, props.counted);
          return (
            <li>
              <span class="name">{shown}</span>{' '}
              <span class="counts">
                <span class="count">{number.format(f.count)}</span> (<span class="pct">{share}</span>)
              </span>
              <ShareBar count={f.count} of={props.counted} />{' '}
              {unusable ? (
                <span class="hint">no filter: {unusable}</span>
              ) : (
                <span class="filter-links">
                  <a href={withValue(props.params, spec.param, value, spec.set)} aria-label={`only ${shown}`}>
                    only
                  </a>{' '}
                  <a href={withValue(props.params, `not_${spec.param}`, value)} aria-label={`not ${shown}`}>
                    not
                  </a>
                </span>
              )}
            </li>
          );
        })}
      </ul>
      {props.expanded ? (
        <p class="hint">
          {props.hidden > 0
            ? `The ${number.format(FACET_MORE_VALUES)} most frequent ${noun} of ${number.format(props.values.length + props.hidden)}. `
            : null}
          <a href={without(props.params, 'more')}>Fewer {noun}</a>
        </p>
      ) : props.hidden > 0 ? (
        <p class="hint">
          <a href={withValue(props.params, 'more', props.name, true)}>
            More {noun} ({number.format(props.hidden)} not listed; up to {FACET_MORE_VALUES} shown)
          </a>
        </p>
      ) : null}
    </>
  );
}

export function FacetPanel(props: { facets: Facets | Failure; params: URLSearchParams; more?: FacetName }) {
  const f = props.facets;
  return (
    <aside aria-labelledby="facets">
      <h2 id="facets">Narrow down</h2>
      {'message' in f ? (
        <p>Facets unavailable ({f.title.toLowerCase()}).</p>
      ) : (
        <>
          <p class="hint">
            {f.samplePercent !== undefined
              ? f.counted === 0
                ? `Estimated from a ${f.samplePercent} % sample of the range's events (no index narrows a payload comparison, so its matches are not counted one by one), which holds none of the matches: they are rare.`
                : `Estimated from a ${f.samplePercent} % sample of the range's events, scaled (no index narrows a payload comparison, so its matches are not counted one by one); shares are of about ${number.format(f.counted)}.`
              : f.capped
                ? `Counted over the newest ${number.format(f.counted)} matches (more match); shares are of those ${number.format(f.counted)}.`
                : `Counted over every match in the range; shares are of all ${number.format(f.counted)}.`}{' '}
            &ldquo;only&rdquo; narrows the search to a value, &ldquo;not&rdquo; leaves it out.
          </p>
          {FACET_NAMES.map((name) => (
            <FacetList
              name={name}
              params={props.params}
              values={f[name]}
              counted={f.counted}
              hidden={f.hidden[name]}
              expanded={props.more === name}
            />
          ))}
        </>
      )}
    </aside>
  );
}

/**
 * An empty first page of a bounded search: the same search over the next larger quick range (an
 * absolute From/To: over all time), as a link saying so.
 */
function WiderRange(props: { params: URLSearchParams; parsed: ParsedSearch | undefined }) {
  const wider = props.parsed && widerRange(props.params, props.parsed);
  if (!wider) return null;
  return (
    <p>
      <a href={searchHref(wider.params)}>Same search over {wider.label}</a>
    </p>
  );
}

function Tail(props: { params: URLSearchParams }) {
  const stream = new URLSearchParams(props.params);
  stream.delete('cursor');
  stream.delete('limit');
  const query = stream.toString();
  return (
    <section id="tail-section" aria-labelledby="tail" data-stream={`/events/tail${query ? `?${query}` : ''}`}>
      <h2 id="tail">Live tail</h2>
      <p class="hint">
        New events matching these filters appear here without reloading. The tail follows event time, so an
        event that arrives late, with a time older than one already shown, is not shown.
      </p>
      <noscript>
        <p>The live tail needs JavaScript; everything else on this page works without it.</p>
      </noscript>
      <button type="button" hidden>
        Start live tail
      </button>{' '}
      <button type="button" aria-pressed="false" hidden>
        Pause
      </button>
      <p data-status role="status" />
      <ol class="tail" aria-label="Tailed events" />
    </section>
  );
}

export function SearchPage(props: SearchPageProps) {
  const { params, view } = props;
  const sort = props.parsed?.sort ?? 'newest';
  return (
    <Layout
      title="Search"
      current="search"
      scripts={[
        '/assets/tail.js',
        '/assets/keys.js',
        '/assets/table.js',
        '/assets/refresh.js',
        '/assets/suggest.js',
        '/assets/detail.js',
        '/assets/uplot.js',
        '/assets/histogram.js',
      ]}
      styles={['/assets/uplot.css']}
      head={<RefreshFallback parsed={props.parsed} />}
    >
      {/* The page's one h1, for assistive technology: the first screen is for the results. */}
      <h1 class="visually-hidden">Search events</h1>
      <Problems problems={props.problems} intro="Some filters could not be used:" />
      <QueryBar
        params={params}
        parsed={props.parsed}
        error={props.barError}
        suggestions={
          view && !('message' in view.facets) ? facetSuggestions(writeQueryBar(params), view.facets) : []
        }
      />
      <TimeToolbar params={params} parsed={props.parsed}>
        <SaveSearchForm params={params} />
        {/* Folded: the histogram and the results come first; the bar and the pills show the filters. */}
        <details class="filter-form">
          <summary>Every filter as a form</summary>
          <FilterForm params={params} />
        </details>
        {props.parsed?.range !== undefined ? (
          <p class="hint">
            <a href={`/events?${absoluteQuery(params, props.parsed)}`} data-copy-link>
              Link with absolute time
            </a>{' '}
            (the same events tomorrow: {utc(props.parsed.filter.from ?? new Date(0), false)} to{' '}
            {utc(props.parsed.now, false)} UTC)
          </p>
        ) : null}
      </TimeToolbar>
      <FilterPills params={params} />
      {props.failure ? (
        <div class="problems" role="alert">
          <h2>{props.failure.title}</h2>
          <p>{props.failure.message}</p>
        </div>
      ) : null}
      {view ? <HistogramPanel histogram={view.histogram} params={params} /> : null}
      {view ? (
        <div class="layout">
          <section aria-labelledby="results">
            <div class="results-head">
              <h2 id="results">Results</h2>
              <Total total={view.total} />
              <ExportLinks params={params} parsed={props.parsed} />
              {view.page.rows.length > 0 ? <RowsNote params={params} parsed={props.parsed} /> : null}
              <TableSettings params={params} parsed={props.parsed} />
            </div>
            <Results rows={view.page.rows} params={params} parsed={props.parsed} />
            {view.page.rows.length === 0 && !params.has('cursor') ? (
              <WiderRange params={params} parsed={props.parsed} />
            ) : null}
            <nav class="pages" aria-label="Result pages">
              {params.has('cursor') ? (
                <a href={`/events${withCursor(params, undefined)}`}>
                  {sort === 'oldest' ? 'Oldest' : 'Newest'}
                </a>
              ) : null}
              {view.previous ? (
                <a href={`/events${withCursor(params, view.previous)}`} rel="prev">
                  {sort === 'oldest' ? '← Older' : '← Newer'}
                </a>
              ) : null}
              {view.next ? (
                <a href={`/events${withCursor(params, view.next)}`} rel="next">
                  {sort === 'oldest' ? 'Newer →' : 'Older →'}
                </a>
              ) : null}
            </nav>
          </section>
          <FacetPanel facets={view.facets} params={params} more={props.parsed?.more} />
        </div>
      ) : null}
      <Tail params={params} />
    </Layout>
  );
}
