/** @jsxRuntime automatic @jsxImportSource hono/jsx */
/**
 * `GET /events/:uid`: the stored attributes with "filter for / filter out" links, the broker
 * coordinates and ingestion time, who produced it (the verified caller ingest recorded), a link to
 * the surrounding events under the filters of the search it was opened from, the payload as a collapsible
 * tree (every value with its filter links) and the verbatim CloudEvent. Copy buttons appear with
 * JavaScript (`/assets/detail.js`); everything else works without it.
 */
import { eventName } from '@event-observatory/events';
import { type EventProducerIdentity, type StoredEvent, severityName } from '@event-observatory/store';
import type { Child } from 'hono/jsx';
import { DEFAULT_STEP } from '../surrounding.js';
import { CopyButton, Layout, utc } from './layout.js';
import { searchHref } from './search.js';

const CE_ATTRIBUTES = new Set([
  'id',
  'source',
  'type',
  'specversion',
  'subject',
  'time',
  'data',
  'data_base64',
]);
const CE_ATTRIBUTES_MORE = new Set(['datacontenttype', 'dataschema']);

const search = (pairs: [string, string][]) => `/events?${new URLSearchParams([['range', 'all'], ...pairs])}`;

function FilterLinks(props: {
  label: string;
  for: [string, string] | undefined;
  out: [string, string] | undefined;
}) {
  return (
    <span class="filter-links">
      {props.for ? (
        <a href={search([props.for])} aria-label={`filter for ${props.label}`}>
          filter for
        </a>
      ) : null}{' '}
      {props.out ? (
        <a href={search([props.out])} aria-label={`filter out ${props.label}`}>
          filter out
        </a>
      ) : null}
    </span>
  );
}

/** A payload value as the `payload` filter reads it: JSON for every scalar (so "42" stays text). */
const asCondition = (path: string[], op: '=' | '!=', value: unknown) =>
  `${path.join('.')} ${op} ${JSON.stringify(value)}`;

function Tree(props: { value: unknown; path: string[]; name: string }): Child {
  const { value, path, name } = props;
  if (value !== null && typeof value === 'object') {
    const entries = Array.isArray(value)
      ? value.map((v, i) => [String(i), v] as const)
      : Object.entries(value);
    return (
      <details open>
        <summary>
          {name} {Array.isArray(value) ? `[${entries.length}]` : `{${entries.length}}`}
        </summary>
        <ul class="tree">
          {entries.map(([k, v]) => (
            <li>
              <Tree value={v} path={[...path, k]} name={k} />
            </li>
          ))}
        </ul>
      </details>
    );
  }
  const label = `${path.join('.')} = ${JSON.stringify(value)}`;
  // A key with a dot, space or operator cannot be written as a payload condition's path.
  const usable = path.length > 0 && path.every((k) => /^[^\s.=!<>]+$/.test(k));
  return (
    <span>
      <span class="key">{name}</span>: <code>{JSON.stringify(value)}</code>{' '}
      {usable ? (
        <FilterLinks
          label={label}
          for={['payload', asCondition(path, '=', value)]}
          out={['payload', asCondition(path, '!=', value)]}
        />
      ) : null}
    </span>
  );
}

/**
 * The producer in one line: authtype and authid, then namespace and issuer when known; a dash for
 * events stored without one (before it was recorded, or from a record without the header).
 */
export function producedBy(p: EventProducerIdentity | null): string {
  if (p === null) return '—';
  const who = p.authid === undefined ? p.authtype : `${p.authtype} ${p.authid}`;
  const more = [
    ...(p.namespace === undefined ? [] : [`namespace ${p.namespace}`]),
    ...(p.issuer === undefined ? [] : [`issuer ${p.issuer}`]),
  ];
  return more.length ? `${who} (${more.join(', ')})` : who;
}

/** `search`: the filters of the search the event was opened from (its link carries them). */
export function EventPage(props: { event: StoredEvent; search: URLSearchParams }) {
  const e = props.event;
  const severity = e.severityRank === null ? undefined : (severityName(e.severityRank) ?? undefined);
  const name = eventName({ source: e.source, id: e.id });
  const rows: [string, string, [string, string] | undefined, [string, string] | undefined, boolean?][] = [
    ['Time (UTC)', utc(e.occurredAt), undefined, undefined],
    ['Type', e.type, ['type', e.type], ['not_type', e.type]],
    ['Source', e.source, ['source', e.source], ['not_source', e.source], true],
    ['Id', e.id, ['id', e.id], undefined, true],
    ['Name', name, undefined, undefined, true],
    [
      'Subject',
      e.subject ?? '—',
      e.subject ? ['subject', e.subject] : undefined,
      e.subject ? ['not_subject', e.subject] : undefined,
    ],
    [
      'Severity',
      severity ?? '—',
      severity ? ['level', severity] : undefined,
      severity ? ['not_level', severity] : undefined,
    ],
    ['Device', e.deviceId ?? '—', undefined, undefined],
    ['Tags', e.tags.length ? e.tags.join(', ') : '—', undefined, undefined],
    ['Ingested (UTC)', utc(e.ingestedAt), undefined, undefined],
    ['Produced by', producedBy(e.producer), undefined, undefined],
    ['Broker topic', e.broker?.topic ?? '—', undefined, undefined],
    ['Partition', e.broker ? String(e.broker.partition) : '—', undefined, undefined],
    ['Offset', e.broker?.offset ?? '—', undefined, undefined],
    ['Event uid', e.key.uid, undefined, undefined],
  ];
  for (const [k, v] of Object.entries(e.raw)) {
    if (CE_ATTRIBUTES.has(k) || CE_ATTRIBUTES_MORE.has(k) || typeof v !== 'string') continue;
    rows.push([`Extension ${k}`, v, ['ext', `${k}=${v}`], undefined]);
  }
  const around = `/events/${e.key.uid}/surrounding?${new URLSearchParams([['t', e.key.occurredAt], ...props.search])}`;
  const verbatim = JSON.stringify(e.raw, null, 2);
  return (
    <Layout title={`Event ${e.type}`} current="none" scripts={['/assets/detail.js']}>
      <p>
        <a href={searchHref(props.search)}>← Back to search</a> · <a href={around}>Surrounding events</a> (
        {DEFAULT_STEP} before and after{props.search.size ? ', under the filters of that search' : ''})
      </p>
      <h1>Event {e.type}</h1>
      <dl>
        {rows.map(([k, v, forPair, outPair, copy]) => (
          <>
            <dt>{k}</dt>
            <dd>
              <span class="wrap">{v}</span> {copy ? <CopyButton value={v} what={k.toLowerCase()} /> : null}{' '}
              <FilterLinks label={`${k.toLowerCase()} ${v}`} for={forPair} out={outPair} />
            </dd>
          </>
        ))}
      </dl>
      {e.raw.data !== undefined ? (
        <section aria-labelledby="data-title">
          <h2 id="data-title">Payload</h2>
          <Tree value={e.raw.data} path={[]} name="data" />
        </section>
      ) : null}
      <section aria-labelledby="raw-title">
        <h2 id="raw-title">CloudEvent as stored</h2>
        <CopyButton value={verbatim} what="the JSON" />
        <details open>
          <summary>Verbatim JSON</summary>
          <pre>
            <code>{verbatim}</code>
          </pre>
        </details>
      </section>
    </Layout>
  );
}
