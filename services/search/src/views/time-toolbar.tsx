/** @jsxRuntime automatic @jsxImportSource hono/jsx */
/**
 * The time toolbar under the query bar: the range searched, links one range earlier and later and
 * zoomed out (`time-toolbar.ts`), a calendar of absolute From/To and the auto-refresh choice, then
 * whatever the page adds to the same wrapping row. All plain links and forms; `/assets/refresh.js` reloads only the results when JavaScript runs, and
 * `/assets/table.js` writes the times in the browser's zone with `tz=browser`.
 */
import type { Child } from 'hono/jsx';
import type { ParsedSearch } from '../filters.js';
import { REFRESH, refreshSeconds, searchedRange, timeSteps } from '../time-toolbar.js';
import { HiddenFields } from './layout.js';
import { Time } from './results-table.js';

/** Every parameter of `params` but `dropped` (and the page position), as hidden fields. */
function KeepOthers(props: { params: URLSearchParams; dropped: readonly string[] }) {
  const kept = [...new Set(props.params.keys())].filter(
    (name) => name !== 'cursor' && name !== 'bar' && !props.dropped.includes(name),
  );
  return <HiddenFields params={props.params} names={kept} />;
}

/** A time as a `datetime-local` value in UTC, to the second. */
function localValue(at: Date | undefined): string {
  return at ? at.toISOString().slice(0, 19) : '';
}

const REFRESH_LABELS: Record<keyof typeof REFRESH, string> = {
  off: 'Off',
  '10s': 'Every 10 s',
  '30s': 'Every 30 s',
  '1m': 'Every minute',
  '5m': 'Every 5 minutes',
};

/** One end of the calendar's range: its label names the zone the value is in (UTC, or the browser's with tz=browser). */
function CalendarField(props: {
  id: string;
  name: string;
  label: string;
  value: string | undefined;
  required?: boolean;
  describedBy?: string;
}) {
  return (
    <>
      <label for={props.id}>
        {props.label} <span data-zone="(your time zone)">(UTC)</span>
      </label>
      <input
        id={props.id}
        name={props.name}
        type="datetime-local"
        step="1"
        value={props.value}
        required={props.required}
        aria-describedby={props.describedBy}
      />
    </>
  );
}

function Calendar(props: { params: URLSearchParams; parsed: ParsedSearch }) {
  const range = searchedRange(props.parsed);
  const browser = props.parsed.timeZone === 'browser';
  return (
    <details class="calendar">
      <summary>Calendar</summary>
      <form method="get" action="/events" aria-label="Calendar" data-tz={browser ? 'browser' : undefined}>
        <KeepOthers params={props.params} dropped={['range', 'from', 'to']} />
        <CalendarField id="f-cal-from" name="from" label="Start" value={localValue(range?.from)} required />
        <CalendarField
          id="f-cal-to"
          name="to"
          label="End"
          value={localValue(range?.to)}
          describedBy="f-cal-hint"
        />
        <span id="f-cal-hint" class="hint">
          the end is exclusive; without it, up to now
        </span>
        <button type="submit">Show</button>
      </form>
    </details>
  );
}

function RefreshChoice(props: { params: URLSearchParams; parsed: ParsedSearch }) {
  const seconds = refreshSeconds(props.parsed);
  const ended = props.parsed.refresh !== 'off' && seconds === 0;
  return (
    <form method="get" action="/events" class="refresh" aria-label="Auto-refresh">
      <KeepOthers params={props.params} dropped={['refresh']} />
      <label for="f-refresh">Auto-refresh</label>{' '}
      <select id="f-refresh" name="refresh" aria-describedby={ended ? 'f-refresh-ended' : undefined}>
        {Object.keys(REFRESH).map((name) => (
          <option value={name} selected={name === props.parsed.refresh}>
            {REFRESH_LABELS[name as keyof typeof REFRESH]}
          </option>
        ))}
      </select>{' '}
      <button type="submit">Set</button>
      {ended ? (
        <span id="f-refresh-ended" class="hint">
          {' '}
          paused: the range has ended
        </span>
      ) : null}
    </form>
  );
}

/** The toolbar row; `children` (the page's folded forms and links) follow the time controls on it. */
export function TimeToolbar(props: {
  params: URLSearchParams;
  parsed: ParsedSearch | undefined;
  children?: Child;
}) {
  const { parsed, params } = props;
  if (!parsed) return <div class="toolbar">{props.children}</div>;
  const range = searchedRange(parsed);
  const steps = timeSteps(params, parsed);
  const seconds = refreshSeconds(parsed);
  return (
    <div
      class="toolbar"
      data-refresh={seconds > 0 ? String(seconds) : undefined}
      data-tz={parsed.timeZone === 'browser' ? 'browser' : undefined}
    >
      <p id="range-shown">
        {range ? (
          <>
            <Time at={range.from} /> to <Time at={range.to} /> <span data-zone="">UTC</span>
          </>
        ) : parsed.filter.to ? (
          <>
            All time before <Time at={parsed.filter.to} /> <span data-zone="">UTC</span>
          </>
        ) : (
          'All time'
        )}
      </p>
      {steps ? (
        <nav aria-label="Step through time" class="steps">
          {steps.earlier ? <a href={`/events?${steps.earlier}`}>← Earlier</a> : null}
          <a href={`/events?${steps.zoomOut}`}>Zoom out</a>
          {steps.later ? <a href={`/events?${steps.later}`}>Later →</a> : null}
        </nav>
      ) : null}
      <Calendar params={params} parsed={parsed} />
      <RefreshChoice params={params} parsed={parsed} />
      {props.children}
    </div>
  );
}

/** The reload without JavaScript: a meta refresh that only a browser without scripts reads. */
export function RefreshFallback(props: { parsed: ParsedSearch | undefined }) {
  const seconds = props.parsed ? refreshSeconds(props.parsed) : 0;
  if (seconds === 0) return null;
  return (
    <noscript>
      <meta http-equiv="refresh" content={String(seconds)} />
    </noscript>
  );
}
