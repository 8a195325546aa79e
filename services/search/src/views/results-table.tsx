/** @jsxRuntime automatic @jsxImportSource hono/jsx */
/**
 * Events as a table: the chosen columns (`columns.ts`), each cell one line cut with an ellipsis
 * (the whole value on hover, `title`), times as `<time datetime>` in UTC (`/assets/table.js`
 * rewrites them to the browser's zone when asked), and, when the events were read with it, the
 * whole event: as a table of its values (with copy buttons for each path and value, shown by
 * `/assets/detail.js`) and as JSON. Its toggle is a `<details>` in the row's first cell, so a row
 * stays one line; the event itself is a hidden row under it that the style sheet shows while that
 * `<details>` is open (`:has()`, no script).
 */
import {
  CELL_CHARS,
  type CellRow,
  DOCUMENT_BYTES,
  type EventRow,
  severityName,
} from '@event-observatory/store';
import { ATTRIBUTE_COLUMNS, type Column, DEFAULT_COLUMNS } from '../columns.js';
import type { TimeZone } from '../filters.js';
import { CopyButton, number, utc } from './layout.js';

/**
 * Link to one event; the time bounds the lookup to one partition and the time index. `search`:
 * the filters of the search it is opened from, which its page links back to and its surrounding
 * events keep.
 */
export function eventHref(row: Pick<EventRow, 'key'>, search?: URLSearchParams): string {
  return `/events/${row.key.uid}?${new URLSearchParams([['t', row.key.occurredAt], ...(search ?? [])])}`;
}

const DEFAULT: Column[] = DEFAULT_COLUMNS.map((name) => ({ kind: 'attribute', name }));

/** A value cut by the store (one character over `CELL_CHARS`) ends in an ellipsis. */
function cellText(value: string | null | undefined): string {
  if (value === null || value === undefined) return '';
  return value.length > CELL_CHARS ? `${value.slice(0, CELL_CHARS)}…` : value;
}

function heading(column: Column): string {
  return column.kind === 'attribute' ? ATTRIBUTE_COLUMNS[column.name] : column.name;
}

/** The text of a column's cell in a row (`CellRow` fields when the row was read with them). */
function cellOf(column: Column, row: EventRow | CellRow, columns: readonly Column[]): string {
  const nth = (kind: Column['kind']) => columns.filter((c) => c.kind === kind).indexOf(column);
  const cells = 'data' in row ? row : undefined;
  switch (column.kind) {
    case 'data':
      return cellText(cells?.data[nth('data')]);
    case 'ext':
      return cellText(cells?.extensions[nth('ext')]);
    case 'attribute':
      break;
  }
  switch (column.name) {
    case 'severity':
      return row.severityRank === null ? '' : (severityName(row.severityRank) ?? String(row.severityRank));
    case 'type':
      return row.type;
    case 'source':
      return row.source;
    case 'id':
      return row.id;
    case 'subject':
      return row.subject ?? '';
    case 'summary':
      return cellText(cells?.summary);
    case 'time':
      return utc(row.occurredAt);
  }
}

/** A time as UTC text that `/assets/table.js` can rewrite to the browser's zone. */
export function Time(props: { at: Date }) {
  return <time datetime={props.at.toISOString()}>{utc(props.at)}</time>;
}

/** Every leaf of a JSON value with its dotted path, in document order. */
function leaves(value: unknown, path: string): [string, string][] {
  if (value !== null && typeof value === 'object') {
    const entries = Array.isArray(value)
      ? value.map((v, i) => [String(i), v] as const)
      : Object.entries(value);
    if (entries.length === 0) return [[path, Array.isArray(value) ? '[]' : '{}']];
    return entries.flatMap(([k, v]) => leaves(v, path ? `${path}.${k}` : k));
  }
  return [[path, typeof value === 'string' ? value : JSON.stringify(value)]];
}

/** The whole event under a row: its values as a table, its JSON behind a second toggle; a large one only linked. */
function Expanded(props: { row: CellRow; href: string }) {
  const { row } = props;
  if (row.document === null)
    return (
      <p>
        This event is {number.format(Math.ceil(row.documentBytes / 1024))} kB, more than the{' '}
        {DOCUMENT_BYTES / 1024} kB shown here: <a href={props.href}>open it</a>.
      </p>
    );
  const document = JSON.parse(row.document) as unknown;
  return (
    <>
      <table class="values">
        <caption class="hint">The event's values by path</caption>
        <thead>
          <tr>
            <th scope="col">Path</th>
            <th scope="col">Value</th>
          </tr>
        </thead>
        <tbody>
          {leaves(document, '').map(([path, value]) => (
            <tr>
              <th scope="row">
                {path} <CopyButton value={path} what={`the path ${path}`} />
              </th>
              <td>
                {value} <CopyButton value={value} what={`the value of ${path}`} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <details>
        <summary>JSON</summary>
        <pre>{JSON.stringify(document, null, 2)}</pre>
      </details>
    </>
  );
}

export interface EventTableProps {
  rows: (EventRow | CellRow)[];
  caption: string;
  /** The caption for assistive technology only (a heading line above the table says it). */
  captionHidden?: boolean;
  search: URLSearchParams;
  /** The columns, the time first; default the attribute columns. */
  columns?: readonly Column[];
  /** Where the page shows times (`tz`); default UTC. */
  timeZone?: TimeZone;
  /** A uid whose row is marked (`aria-current`); every row then has an id (`e-<uid>`) links can scroll to. */
  anchor?: string;
}

/**
 * Events as a table, in the order given. `search` goes along on each event's link. With an
 * `anchor` its row is marked in words and for screen readers, not by colour alone. Rows read with
 * their events (`CellRow.documentBytes` > 0) get the expand toggle in their time cell and the event
 * in a row below, shown while the toggle is open.
 */
export function EventTable(props: EventTableProps) {
  const columns = props.columns ?? DEFAULT;
  return (
    <div class="scroll">
      <table class="events" data-tz={props.timeZone === 'browser' ? 'browser' : undefined}>
        <caption class={props.captionHidden ? 'visually-hidden' : 'hint'}>{props.caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th scope="col">{heading(c)}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.flatMap((r) => {
            const anchor = r.key.uid === props.anchor;
            const href = eventHref(r, props.search);
            const expandable = 'documentBytes' in r && r.documentBytes > 0;
            const row = (
              <tr
                id={props.anchor === undefined ? undefined : `e-${r.key.uid}`}
                class={anchor ? 'event anchor' : 'event'}
                aria-current={anchor ? 'true' : undefined}
              >
                {columns.map((c) => {
                  if (c.name === 'time')
                    return (
                      <td class="time">
                        {expandable ? (
                          <details class="toggle">
                            <summary>
                              <span class="visually-hidden">Details of {`${r.type} ${r.id}`}</span>
                            </summary>
                          </details>
                        ) : null}
                        {anchor ? <strong>This event: </strong> : null}
                        <a href={href}>
                          <Time at={r.occurredAt} />
                        </a>
                      </td>
                    );
                  const text = cellOf(c, r, columns);
                  return (
                    <td class="cell" title={text || undefined}>
                      {text}
                    </td>
                  );
                })}
              </tr>
            );
            if (!expandable) return [row];
            return [
              row,
              <tr class="expand">
                <td colspan={columns.length}>
                  <Expanded row={r} href={href} />
                </td>
              </tr>,
            ];
          })}
        </tbody>
      </table>
    </div>
  );
}
